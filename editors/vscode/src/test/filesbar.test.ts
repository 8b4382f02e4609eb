import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChangedFiles, parseNumstat } from '../filesbar';
import { agentCounts, gitTop, textAt } from '../gitfiles';
import { splitPath } from '../shared/paths';

test('the bar gathers the agent commits per file until kept, and counts them', () => {
  const b = new ChangedFiles();
  b.commit('aaaa1111', ['a.txt', 'src/b.go']);
  b.commit('bbbb2222', ['a.txt']);
  assert.deepEqual(b.agentFile('a.txt')?.commits, ['aaaa1111', 'bbbb2222']);
  assert.deepEqual(b.uncounted().map((f) => f.path), ['a.txt', 'src/b.go']);
  // Counts of an older list of commits are ignored: a.txt gained a commit since.
  b.counted('a.txt', ['aaaa1111'], 9, 9);
  b.counted('src/b.go', ['aaaa1111'], 2, 1);
  assert.deepEqual(b.list(), [
    { path: 'a.txt', source: 'agent', added: 0, removed: 0 },
    { path: 'src/b.go', source: 'agent', added: 2, removed: 1 },
  ]);
  b.remove(['src/b.go']);
  assert.deepEqual(b.select(), { agent: ['a.txt'], command: [] });
  assert.equal(b.empty, false);
});

test("commands' changes join the bar with their diff's counts; keeping them ignores their commit", () => {
  const b = new ChangedFiles();
  b.commandChanges([{ path: '/w/gen.go', rel: 'gen.go', command: 'go generate', turn: 2, created: true, diff: '--- /dev/null\n+++ b/gen.go\n@@ -0,0 +1,2 @@\n+package x\n+var V = 1\n' }]);
  assert.deepEqual(b.list(), [{ path: 'gen.go', source: 'command', added: 2, removed: 0, command: 'go generate', created: true }]);
  const unmark = b.keepingCommands(['gen.go']);
  assert.deepEqual(b.commit('cccc3333', ['gen.go']), [], 'a kept command change became an agent file');
  // Only its one commit: a later agent edit of gen.go is the agent's.
  assert.deepEqual(b.commit('dddd4444', ['gen.go']), ['gen.go']);
  unmark();
  b.remove(['gen.go'], 'agent');
  b.remove(['gen.go'], 'command');
  assert.equal(b.empty, true);
  // The server's list replaces the bar's commands.
  b.commandChanges([{ path: '/w/x', rel: 'x', command: 'make', turn: 3 }]);
  b.setCommandChanges([{ path: '/w/y', rel: 'y', command: 'make', turn: 3, binary: true }]);
  assert.deepEqual(b.list(), [{ path: 'y', source: 'command', added: 0, removed: 0, command: 'make', binary: true }]);
});

test('an undone commit takes its files out when nothing else is left', () => {
  const b = new ChangedFiles();
  b.commit('aaaa1111ffff', ['a.txt', 'b.txt']);
  b.commit('bbbb2222ffff', ['b.txt']);
  b.undone(['aaaa1111']);
  assert.deepEqual(b.select().agent, ['b.txt']);
  assert.deepEqual(b.agentFile('b.txt')?.commits, ['bbbb2222ffff']);
  b.undone(['bbbb2222ffff']);
  assert.equal(b.empty, true);
});

test("a file's commits go to loom.undoFile per conversation; the agent's files survive a reload", () => {
  const b = new ChangedFiles();
  b.commit('aaaa1111', ['a.txt'], 'conv-1');
  b.commit('bbbb2222', ['a.txt', 'b.txt']);
  b.commit('cccc3333', ['a.txt'], 'conv-1');
  assert.deepEqual(b.undoGroups('a.txt'), [{ conversation: 'conv-1', commits: ['aaaa1111', 'cccc3333'] }, { conversation: '', commits: ['bbbb2222'] }]);
  b.commandChanges([{ path: '/w/x', rel: 'x', command: 'make', turn: 3 }]);
  const kept = JSON.parse(JSON.stringify(b.saved()));
  const again = new ChangedFiles();
  assert.equal(again.restore(kept), true);
  assert.deepEqual(again.select(), { agent: ['a.txt', 'b.txt'], command: [] }, "commands' changes come from the server, not the record");
  assert.deepEqual(again.undoGroups('a.txt'), b.undoGroups('a.txt'));
  assert.deepEqual(again.uncounted().map((f) => f.path), ['a.txt', 'b.txt'], 'counted again from git');
  assert.equal(again.restore(kept), false, 'never over files it has');
  assert.equal(new ChangedFiles().restore({ version: 2 } as never), false);
});

test('numstat output: text and binary files', () => {
  assert.deepEqual(parseNumstat('3\t1\ta.txt\n-\t-\tbin.dat\n'), { added: 3, removed: 1 });
  assert.deepEqual(parseNumstat(''), { added: 0, removed: 0 });
});

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
}

test('counts and the text before, from a real repository', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loom-bar-')));
  try {
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'user.email', 't@example.com');
    git(dir, 'config', 'user.name', 'T');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'one\ntwo\nthree\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'base');
    fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'ONE\ntwo\nthree\n');
    git(dir, 'commit', '-qam', 'agent 1');
    const first = git(dir, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'ONE\ntwo\nthree\nfour\nfive\n');
    fs.writeFileSync(path.join(dir, 'new.txt'), 'new\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'agent 2');
    const second = git(dir, 'rev-parse', 'HEAD').trim();
    assert.equal(await gitTop(path.join(dir, 'sub')), dir);
    assert.deepEqual(await agentCounts(dir, [first, second], 'sub/f.txt'), { added: 3, removed: 1 });
    assert.deepEqual(await agentCounts(dir, [second], 'sub/f.txt'), { added: 2, removed: 0 });
    assert.equal(await textAt(dir, `${first}^`, 'sub/f.txt'), 'one\ntwo\nthree\n');
    assert.equal(await textAt(dir, `${second}^`, 'new.txt'), '', 'a created file had no text before');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a long path is split so that the ellipsis lands in its middle: the folders give way, the name stays', () => {
  assert.deepEqual(splitPath('src/deep/dir/name.go'), ['src/deep/dir/', 'name.go']);
  assert.deepEqual(splitPath('top.txt'), ['', 'top.txt']);
  // A long name: its last 24 characters stay whole, the rest joins the part that is cut.
  const long = 'a/' + 'x'.repeat(40) + '_the_end_of_the_name.txt';
  const [lead, tail] = splitPath(long);
  assert.equal(tail.length, 24);
  assert.equal(lead + tail, long);
  assert.ok(tail.endsWith('_the_end_of_the_name.txt'));
});
