// Step 25: the editor's language servers in the agent's loop, with the
// TypeScript server VS Code ships (code-server's typescript-language-
// features): the agent's edit introduces an error; in the same turn the
// model reads it (loom/diagnostics answered from
// vscode.languages.getDiagnostics()), not the error that was there
// before; its fix is followed by "no new problems"; the tool card says
// it too.
import * as assert from 'node:assert/strict';
import { addRules, ask, chat, model, openFile, page, shot, step, until, waitIdle } from '../harness.mjs';

addRules({
  when: /break the greeting/i,
  replies: [
    { tool: { name: 'read_file', args: { path: 'greet.ts' } } },
    { tool: { name: 'edit_file', args: { path: 'greet.ts', old_string: 'return "Hello, " + name;', new_string: 'return "Hello, " + nam;' } } },
    { tool: { name: 'edit_file', args: { path: 'greet.ts', old_string: 'return "Hello, " + nam;', new_string: 'return "Hello, " + name;' } } },
    { text: ['Broke it, read the error, fixed it.'] },
  ],
});

const said = (r) => JSON.stringify(r.messages ?? []);

step('25. the TypeScript server\'s new error reaches the model in the same turn (not the old one); the fix reads "no new problems"', async () => {
  // greet.ts (harness.mjs) has an error that was there before the agent.
  await openFile('greet.ts');
  // The TypeScript server is up and looks at the file: its error is drawn.
  await until('the TypeScript server\'s diagnostics in the editor', async () =>
    (await page.locator('.monaco-editor .squiggly-error').count()) > 0, 90_000, 200);
  await shot('25', 'ts-preexisting-error');
  const from = model.requests.length;
  await ask('Break the greeting');
  await until('the answer', async () => /Broke it, read the error, fixed it\./.test((await chat().locator('.log .items').textContent()) ?? ''), 90_000);
  await waitIdle(60_000);
  const reqs = model.requests.slice(from);
  assert.equal(reqs.length, 4, 'the read, the edit, the fix, the answer');
  // After the breaking edit: the new error, not the old one.
  const afterBreak = said(reqs[2]);
  assert.match(afterBreak, /the language server reports 1 new error/);
  assert.match(afterBreak, /greet\.ts:2:\d+: error: Cannot find name 'nam'/);
  assert.doesNotMatch(afterBreak, /not assignable to type 'number'/, 'the error that was there before is left out');
  // After the fix: nothing new.
  assert.match(said(reqs[3]), /no new problems in greet\.ts/);
  // People see it on the card.
  const cards = chat().locator('.card.tool[data-tool="edit_file"]').filter({ hasText: 'greet.ts' });
  const breaking = cards.nth((await cards.count()) - 2);
  assert.match((await breaking.textContent()) ?? '', /1 new problem in greet\.ts/);
  await breaking.scrollIntoViewIfNeeded();
  await shot('25', 'ts-new-error-on-card');
});
