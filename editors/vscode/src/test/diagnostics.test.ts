import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { answerDiagnostics, DiagnosticsDeps, LspDiagnostic } from '../diagnostics';

const undefinedX: LspDiagnostic = { range: { start: { line: 1, character: 13 } }, severity: 1, source: 'ts', message: "Cannot find name 'x'." };

function fakeDeps(open: boolean, canOpen = true) {
  let listener: (() => void) | undefined;
  let current: LspDiagnostic[] = [];
  const deps: DiagnosticsDeps = {
    isOpen: () => open,
    open: async () => { open = canOpen; return canOpen; },
    get: () => current,
    onChange: (_uri, cb) => { listener = cb; return { dispose: () => { listener = undefined; } }; },
  };
  return { deps, publish: (ds: LspDiagnostic[]) => { current = ds; listener?.(); }, listening: () => listener !== undefined };
}

test('before an edit, an open file is answered at once', async () => {
  const f = fakeDeps(true);
  f.publish([undefinedX]);
  const t0 = Date.now();
  const got = await answerDiagnostics({ uri: 'file:///w/a.ts', after: false, waitMs: 5000 }, f.deps);
  assert.deepEqual(got, { diagnostics: [undefinedX] });
  assert.ok(Date.now() - t0 < 1000);
});

test('after an edit, the answer waits for the language server', async () => {
  const f = fakeDeps(true);
  const answer = answerDiagnostics({ uri: 'file:///w/a.ts', after: true, waitMs: 5000 }, f.deps);
  await new Promise((r) => setImmediate(r));
  assert.ok(f.listening(), 'it listens for the change');
  f.publish([undefinedX]);
  assert.deepEqual(await answer, { diagnostics: [undefinedX] });
  assert.ok(!f.listening(), 'the listener is disposed');
});

test('after an edit with no change, the wait is bounded', async () => {
  const f = fakeDeps(true);
  const t0 = Date.now();
  const got = await answerDiagnostics({ uri: 'file:///w/a.ts', after: true, waitMs: 50 }, f.deps);
  assert.deepEqual(got, { diagnostics: [] });
  assert.ok(Date.now() - t0 < 2000);
});

test('a file VS Code cannot open is unknown (null), not "no problems"', async () => {
  const f = fakeDeps(false, false);
  assert.deepEqual(await answerDiagnostics({ uri: 'file:///w/a.bin', after: false, waitMs: 50 }, f.deps), { diagnostics: null });
});
