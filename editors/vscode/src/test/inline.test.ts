import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { askInline, inlineItems, inlineParams, InlineSwitch, modelWords } from '../inline';
import { toServerConfig } from '../settings';

test('the params carry the position and LSP\'s trigger kind (VS Code counts from 0, LSP from 1)', () => {
  assert.deepEqual(inlineParams('file:///w/a.go', { line: 3, character: 8 }, 1), {
    textDocument: { uri: 'file:///w/a.go' }, position: { line: 3, character: 8 }, context: { triggerKind: 2 },
  });
  const sel = { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 4 } }, text: 'fmt.Println' };
  assert.deepEqual(inlineParams('file:///w/a.go', { line: 1, character: 4 }, 0, sel).context, { triggerKind: 1, selectedCompletionInfo: sel });
});

test('the items of a list, of an array, of null; what is not an item is left out', () => {
  const item = { insertText: 'a + b', range: { start: { line: 3, character: 8 }, end: { line: 3, character: 8 } },
    command: { title: 'Accepted', command: 'loom.inlineCompletionAccepted', arguments: [{ uri: 'file:///w/a.go', chars: 5, lines: 1 }] } };
  const snippet = { insertText: { kind: 'snippet', value: 'x${1:y}' } };
  assert.deepEqual(inlineItems({ items: [item, snippet] }), [item, snippet]);
  assert.deepEqual(inlineItems([item]), [item]);
  assert.deepEqual(inlineItems(null), []);
  assert.deepEqual(inlineItems({ items: [{ insertText: 3 }, null, { insertText: 'x', range: { start: 1 } }, 'text'] }), []);
});

/** A cancellation token the test cancels. */
function token() {
  return { isCancellationRequested: false, cancel() { this.isCancellationRequested = true; } };
}

test('asks the server and returns its items', async () => {
  const sent: unknown[] = [];
  const params = inlineParams('file:///w/a.go', { line: 0, character: 1 }, 1);
  const items = await askInline(async (p) => { sent.push(p); return { items: [{ insertText: 'x' }] }; }, params, token());
  assert.deepEqual(items, [{ insertText: 'x' }]);
  assert.deepEqual(sent, [params]);
});

test('cancelled before: the server is not asked; cancelled while it runs: no items, nothing said', async () => {
  const params = inlineParams('file:///w/a.go', { line: 0, character: 1 }, 1);
  let asked = 0;
  const before = token();
  before.cancel();
  assert.deepEqual(await askInline(async () => { asked++; return { items: [{ insertText: 'x' }] }; }, params, before), []);
  assert.equal(asked, 0);

  // VS Code cancels while the answer is on its way (the user typed on).
  const during = token();
  const errors: unknown[] = [];
  const late = await askInline(async () => { during.cancel(); return { items: [{ insertText: 'stale' }] }; }, params, during, (e) => errors.push(e));
  assert.deepEqual(late, []);
  // The client's cancellation: the request is rejected with RequestCancelled.
  const rejected = token();
  const out = await askInline(async () => { rejected.cancel(); throw Object.assign(new Error('cancelled'), { code: -32800 }); }, params, rejected,
    (e) => errors.push(e));
  assert.deepEqual(out, []);
  assert.deepEqual(errors, []);
});

test('a failure gives no items and is said once to onError', async () => {
  const errors: unknown[] = [];
  const params = inlineParams('file:///w/a.go', { line: 0, character: 1 }, 1);
  const out = await askInline(async () => { throw new Error('connection closed'); }, params, token(), (e) => errors.push(e));
  assert.deepEqual(out, []);
  assert.equal(errors.length, 1);
});

test('the switch: hidden until the server serves it; on and off say the model', () => {
  const sw = new InlineSwitch(true);
  assert.equal(sw.view().visible, false);
  assert.equal(sw.asking, false);
  sw.register('loom/inlineCompletion');
  sw.model = { api: 'ollama', model: 'qwen2.5-coder:1.5b-base' };
  assert.deepEqual(sw.view(), {
    visible: true, text: '$(sparkle) qwen2.5-coder:1.5b-base',
    tooltip: 'Loom inline completion: on, from qwen2.5-coder:1.5b-base. Click to turn it off.',
  });
  assert.equal(sw.asking, true);
  assert.equal(sw.toggle(), false);
  assert.equal(sw.asking, false);
  assert.match(sw.view().text, /^\$\(circle-slash\) qwen2\.5-coder/);
  assert.match(sw.view().tooltip, /off .*Click to turn it on/);
  sw.toggle();
  sw.unregister('loom/inlineCompletion');
  assert.equal(sw.view().visible, false, 'unregistered: hidden');
  assert.equal(sw.asking, false);
});

test('the model in words: its name, else the server\'s kind', () => {
  assert.equal(modelWords({ api: 'infill' }), 'llama.cpp /infill');
  assert.equal(modelWords({ api: 'completions', model: 'deepseek-chat' }), 'deepseek-chat');
  assert.equal(modelWords(undefined), 'the completion model');
});

test('loom.completion.* settings become [completion] keys, empty ones left out', () => {
  assert.deepEqual(toServerConfig({ completion: { api: 'infill', baseUrl: ' http://127.0.0.1:8012 ', model: '', apiKeyEnv: undefined } }), {
    completion: { api: 'infill', base_url: 'http://127.0.0.1:8012' },
  });
  assert.deepEqual(toServerConfig({ completion: { api: '' } }), {});
});
