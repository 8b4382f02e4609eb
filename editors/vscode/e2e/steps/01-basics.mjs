// Steps 1-6: install, streaming markdown, bash approval, an edit with its
// commit and Undo, Stop, the model server down.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('1. the .vsix installs; a git workspace opens with a file in a tab', async () => {
  await openWorkbench();
  await openFile('hello.txt');
  await until('hello.txt in the editor', async () => (await editorText('hello.txt')).includes('Hello, world!'));
  await openPanel();
  await until('the model name in the header', async () => (await chat().locator('.bar .model').textContent()) === 'scripted-coder');
  await waitIdle();
  const status = await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().textContent();
  assert.match(status ?? '', /Loom: idle/);
  await shot('01', 'workspace-and-panel');
}, 300_000);

step('2. a prompt streams, rendered as markdown', async () => {
  const t0 = await ask('Explain the project');
  const answer = chat().locator('.msg.assistant .markdown').last();
  await until('the first streamed text', async () => ((await answer.textContent()) ?? '').length > 0, 30_000, 10);
  times.promptToFirstText = Date.now() - t0;
  const first = (await answer.textContent()) ?? '';
  await shot('02', 'streaming-1');
  await until('more text', async () => ((await answer.textContent()) ?? '').length > first.length + 20);
  const second = (await answer.textContent()) ?? '';
  await shot('02', 'streaming-2');
  assert.ok(second.length > first.length, 'the second screenshot shows more text');
  await waitIdle();
  assert.equal(await answer.locator('h1').textContent(), 'The project');
  assert.equal(await answer.locator('strong').first().textContent(), 'tiny');
  assert.equal(await answer.locator('table td').count(), 4, 'the table is rendered');
  assert.match((await answer.locator('.code pre code').textContent()) ?? '', /cat hello\.txt/);
  assert.equal(await answer.locator('.code button[data-act="insert"]').count(), 1, 'code blocks have Insert');
  // Task lists are checkboxes (read-only), not "[ ]".
  assert.equal(await answer.locator('li.task-list-item input[type="checkbox"]').count(), 2, 'a task list of two');
  assert.equal(await answer.locator('li.task-list-item input[type="checkbox"]:checked').count(), 1);
  assert.doesNotMatch((await answer.textContent()) ?? '', /\[ \]|\[x\]/);
  assert.equal(await chat().locator('.msg.user').last().locator('.text').textContent(), 'Explain the project');
  await until('usage in the header', async () => /150 tokens/.test((await chat().locator('.bar .usage').textContent()) ?? ''));
  await shot('02', 'markdown');
});

step('3. a bash card: Allow in the card runs it; Deny on another', async () => {
  await ask('Run the greeting script');
  const card = chat().locator('.card.tool').filter({ hasText: 'echo hello-from-bash' }).last();
  await card.locator('button.allow').waitFor();
  assert.equal(await card.locator('.tool-title').textContent(), '$ echo hello-from-bash');
  await until('status bar: waiting for approval', async () =>
    /waiting for approval/.test((await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().textContent()) ?? ''));
  await shot('03', 'approval-asked');
  const tAllow = Date.now();
  await card.locator('button.allow').click();
  await until('the command to run', async () => /s-(running|succeeded)/.test((await card.getAttribute('class')) ?? ''), 30_000, 10);
  times.approvalToRunning = Date.now() - tAllow;
  await until('the card to succeed', async () => (await card.getAttribute('class'))?.includes('s-succeeded'));
  await waitIdle();
  // The conversation's order: the text before the call above its card,
  // the text after the result below it.
  const order = await chat().locator('.log .items').evaluate((log) => [...log.children].map((n) =>
    n.classList.contains('card') ? 'card:' + (n.querySelector('.tool-title')?.textContent ?? '') : n.textContent?.trim() ?? ''));
  const at = (pred) => order.findIndex(pred);
  const before = at((x) => x.includes('Running it.')), cardAt = at((x) => x === 'card:$ echo hello-from-bash'),
    after = at((x) => x.includes('The command printed'));
  assert.ok(before >= 0 && before < cardAt && cardAt < after, `text, card and text in the conversation's order: ${JSON.stringify(order.slice(-5))}`);
  await card.locator('details.output summary').click();
  assert.match((await card.locator('pre.out').textContent()) ?? '', /hello-from-bash/);
  await waitIdle();
  await shot('03', 'allowed-output');

  await ask('Delete the build folder');
  const denied = chat().locator('.card.tool').filter({ hasText: 'rm -rf build' }).last();
  await denied.locator('button.deny').click();
  await until('Denied in the card', async () => ((await denied.locator('.approval').textContent()) ?? '').includes('Denied'));
  await waitIdle();
  assert.match((await chat().locator('.msg.assistant').last().textContent()) ?? '', /left the folder alone/);
  await shot('03', 'denied');
});

step('4. an edit: diff in the card, the tab changes, one commit with exactly that change; Undo restores', async () => {
  const before = git('rev-parse', 'HEAD').trim();
  await ask('Say goodbye in hello.txt');
  const card = chat().locator('.card.tool[data-tool="edit_file"]').last();
  await card.waitFor();
  const tEdit = Date.now();
  await until('the tab to show the edit', async () => (await editorText('hello.txt')).includes('Goodbye, world!'), 30_000, 10);
  times.editToBufferChanged = Date.now() - tEdit;
  await until('the diff in the card', async () => ((await card.locator('.diff-body .add').textContent()) ?? '').includes('Goodbye'));
  assert.match((await card.locator('.diff-body .del').textContent()) ?? '', /Hello, world!/);
  const commitLine = chat().locator('.commit').last();
  await commitLine.waitFor();
  await waitIdle();
  const head = git('rev-parse', 'HEAD').trim();
  assert.notEqual(head, before, 'a new commit');
  assert.equal(git('rev-parse', 'HEAD~1').trim(), before, 'exactly one commit');
  assert.equal(git('show', '--format=', '--name-only', 'HEAD').trim(), 'hello.txt');
  assert.equal(git('show', 'HEAD:hello.txt'), 'Goodbye, world!\nA second line.\n');
  const shown = git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(shown, ['-Hello, world!', '+Goodbye, world!']);
  assert.match((await commitLine.textContent()) ?? '', new RegExp(head.slice(0, 7)));
  await shot('04', 'edit-diff-commit');

  await card.locator('button.open-diff').click();
  await page.locator('.tabs-container .tab').filter({ hasText: "Loom's edit" }).first().waitFor();
  await shot('04', 'open-diff');
  await page.keyboard.press('Control+W');

  await commitLine.locator('button.undo').click();
  await until('the commit line to say undone', async () => (await commitLine.getAttribute('class'))?.includes('is-undone'));
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'Hello, world!\nA second line.\n');
  await until('the buffer restored', async () => (await editorText('hello.txt')).includes('Hello, world!'));
  await shot('04', 'undone');
});

step('5. Stop mid-stream ends the turn, marked cancelled; the next prompt works', async () => {
  await ask('Tell me a long story');
  const answer = chat().locator('.msg.assistant').last();
  await until('the story to stream', async () => /word3 /.test((await answer.textContent()) ?? ''));
  const stop = chat().locator('button.send');
  assert.equal(await stop.textContent(), 'Stop');
  await shot('05', 'streaming-with-stop');
  const t0 = Date.now();
  await stop.click();
  // The time from Stop to idle is printed, not bounded: a speed goal is a
  // benchmark, and on a loaded 2-core machine each of the panel's polls
  // takes seconds (CI saw 11.7 s at load 28). What Stop must do is checked
  // by what the user sees: the turn ends marked cancelled, long before the
  // story's 32 s of streaming would have ended it as done.
  await waitIdle(60_000);
  times.stopToIdle = Date.now() - t0;
  await chat().locator('.turn-end.cancelled').last().waitFor();
  assert.ok(!((await answer.textContent()) ?? '').includes('word399'), 'the stream stopped');
  await shot('05', 'cancelled');
  await ask('Say ok');
  await until('the next answer', async () => /ok, ready for more/.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  await waitIdle();
  await shot('05', 'next-prompt');
});

step('6. model server down: the retry and the final error appear in the chat, once', async () => {
  await stopModel();
  await ask('Are you there?');
  const retry = chat().locator('.notice.warning').filter({ hasText: 'retrying in' }).first();
  await retry.waitFor({ timeout: 30_000 });
  const error = chat().locator('.notice.error').last();
  await error.waitFor({ timeout: 30_000 });
  await waitIdle();
  const retryText = (await retry.textContent()) ?? '';
  assert.equal(retryText.split('retrying in').length - 1, 1, `said once: ${retryText}`);
  const errText = (await error.textContent()) ?? '';
  assert.match(errText, /reach the provider|connection refused/i);
  assert.equal(await chat().locator('.notice.error').filter({ hasText: errText.slice(0, 40) }).count(), 1, 'the error is shown once');
  await shot('06', 'retry-and-error');
  await restartModel();
});
