import { test } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as assert from 'node:assert/strict';
import { describeTool, parseArguments } from '../toolview';
import { beforeText } from '../diff';
import { explainAskError, parseAskArgument } from '../askargs';
import { findExecutable } from '../findbin';

test('tool arguments in words', () => {
  assert.deepEqual(describeTool('bash', '{"command":"npm test"}'), { title: '$ npm test' });
  assert.deepEqual(describeTool('read_file', '{"path":"main.go","offset":10,"limit":31}'), { title: 'main.go:10-40', path: 'main.go' });
  assert.deepEqual(describeTool('read_file', '{"path":"main.go"}'), { title: 'main.go', path: 'main.go' });
  assert.deepEqual(describeTool('grep', '{"pattern":"TODO","path":"src"}'), { title: '/TODO/ in src' });
  assert.deepEqual(describeTool('edit_file', '{"path":"a.txt","old_string":"x","new_string":"y"}'), { title: 'a.txt', path: 'a.txt' });
  assert.deepEqual(describeTool('mystery', '{"x":1}'), { title: '{"x":1}' });
});

test('arguments cut at 200 characters keep their whole fields and the cut one marked', () => {
  const a = parseArguments('{"path":"a.txt","content":"hello wor');
  assert.equal(a.path, 'a.txt');
  assert.equal(a.content, 'hello wor…');
  assert.deepEqual(describeTool('write_file', '{"path":"dir/b.go","content":"package b\\nfunc'), { title: 'dir/b.go', path: 'dir/b.go' });
});

test('beforeText reverses a unified diff, and refuses a file changed since', () => {
  const after = 'one\nTWO\nthree\nfour\n';
  const diff = '--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n';
  assert.equal(beforeText(after, diff), 'one\ntwo\nthree\nfour\n');
  assert.equal(beforeText('one\nchanged\nthree\n', diff), undefined);
  const added = '--- a/f\n+++ b/f\n@@ -2,0 +3,1 @@\n+new\n';
  assert.equal(beforeText('a\nb\nnew\nc\n', added), 'a\nb\nc\n');
});

test('loom.ask takes a prompt string or the code action\'s object with selection and diagnostic', () => {
  assert.deepEqual(parseAskArgument('fix it'), { prompt: 'fix it' });
  assert.equal(parseAskArgument(''), undefined);
  assert.equal(parseAskArgument(undefined), undefined);
  assert.equal(parseAskArgument({ uri: 'file:///w/a.json' }), undefined);
  const range = { start: { line: 2, character: 0 }, end: { line: 2, character: 5 } };
  assert.deepEqual(parseAskArgument({
    prompt: 'Fix this problem: Value expected', uri: 'file:///w/a.json',
    selection: { range, diagnostic: 'Value expected' },
  }), { prompt: 'Fix this problem: Value expected', uri: 'file:///w/a.json', selection: { range, diagnostic: 'Value expected' } });
});

test('findExecutable finds a name on PATH or an absolute path, and says undefined otherwise', () => {
  assert.equal(findExecutable('sh', '/nonexistent:/bin:/usr/bin')?.endsWith('/sh'), true);
  assert.equal(findExecutable('no-such-loom-lsp-binary', '/bin:/usr/bin'), undefined);
  assert.equal(findExecutable('/bin/sh', ''), '/bin/sh');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loom-find-'));
  const plain = path.join(dir, 'loom-lsp');
  fs.writeFileSync(plain, '#!/bin/sh\n', { mode: 0o644 });
  assert.equal(findExecutable('loom-lsp', dir), undefined, 'not executable');
  fs.chmodSync(plain, 0o755);
  assert.equal(findExecutable('loom-lsp', '/nonexistent:' + dir), plain);
  fs.rmSync(dir, { recursive: true });
  assert.equal(findExecutable('', '/bin'), undefined);
});

test('a missing model is explained for VS Code users, with the Settings button', () => {
  const e = explainAskError('loom.ask: no usable model configured: [model] name is not set.');
  assert.match(e.text, /loom\.model\.provider/);
  assert.equal(e.action, 'openSettings');
  assert.deepEqual(explainAskError('loom.ask: session closed'), { text: 'loom.ask: session closed' });
});
