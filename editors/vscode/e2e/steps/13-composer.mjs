// Steps 13-14: queueing, Stop and Escape; the composer's context and slash commands.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('13. queueing: a prompt typed during a turn is drawn after the running answer; Stop stops with text in the input; Escape stops', async () => {
  await ask('Tell me a long story');
  const answer = chat().locator('.log .items .msg.assistant').last();
  await until('the story to stream', async () => /word3 /.test((await answer.textContent()) ?? ''));
  // The answer's nodes are never replaced while it streams (aria-live reads the new words only).
  await answer.evaluate((n) => {
    n.__loomMark = 'kept';
    window.__loomRemoved = 0;
    new MutationObserver((ms) => { for (const m of ms) window.__loomRemoved += m.removedNodes.length; })
      .observe(n, { childList: true, subtree: true });
  });
  const saidOk = await chat().locator('.log .items .msg.user').filter({ hasText: 'Say ok' }).count();
  await ask('Say ok');
  const queued = chat().locator('.log .queue .msg.user').filter({ hasText: 'Say ok' });
  await queued.waitFor();
  assert.match((await queued.textContent()) ?? '', /queued/);
  const grown = (await answer.textContent())?.length ?? 0;
  await until('the answer to go on growing', async () => ((await answer.textContent())?.length ?? 0) > grown + 30);
  assert.equal(await chat().locator('.log .items .msg.user').filter({ hasText: 'Say ok' }).count(), saidOk, 'not inside the answer');
  assert.equal(await answer.evaluate((n) => n.__loomMark), 'kept', 'the answer\'s node is the same');
  assert.equal(await answer.evaluate(() => window.__loomRemoved), 0, 'no node of the answer was replaced');
  await shot('13', 'queued-after-answer');
  // Stop with text in the input stops (and keeps the text).
  const input = chat().locator('textarea.input');
  await input.fill('a draft I keep');
  const stop = chat().locator('button.send');
  assert.equal(await stop.textContent(), 'Stop');
  await stop.click();
  await until('the story to stop', async () => (await chat().locator('.turn-end.cancelled').count()) > 0 &&
    /ok, ready for more/.test((await chat().locator('.log .items').textContent()) ?? ''));
  await waitIdle();
  assert.equal(await input.inputValue(), 'a draft I keep');
  const order = await chat().locator('.log .items').evaluate((l) => [...l.children].slice(-5).map((n) => n.className.split(' ').slice(0, 2).join('.')));
  assert.deepEqual(order, ['msg.assistant', 'turn-end.cancelled', 'msg.user', 'msg.assistant', 'turn-end.done'], 'story, Stopped, then the queued prompt and its answer');
  await shot('13', 'stop-with-text');
  // Escape stops.
  await input.fill('');
  const answers = await chat().locator('.msg.assistant').count();
  await ask('Tell me a long story');
  await until('the new story to stream', async () => (await chat().locator('.msg.assistant').count()) > answers &&
    /word3 /.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  const stops = await chat().locator('.turn-end.cancelled').count();
  const t0 = Date.now();
  await input.press('Escape');
  await until('Escape to stop the turn', async () => (await chat().locator('.turn-end.cancelled').count()) > stops);
  await waitIdle();
  times.escapeToIdle = Date.now() - t0;
  await shot('13', 'escape-stopped');
});

step('14. composer: Ctrl+Alt+L focuses the input; @ attaches the selection, the problems and a file; the request carries them; /status; the model picker', async () => {
  await openFile('bad.json');
  await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 30_000 });
  await openFile('hello.txt');
  await until('hello.txt to be the active editor', async () =>
    /hello\.txt/.test((await page.locator('.tabs-container .tab.active').first().getAttribute('aria-label')) ?? ''));
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.press('Control+Alt+L');
  const input = chat().locator('textarea.input');
  await until('the input to have the focus', async () => input.evaluate((e) => document.hasFocus() && document.activeElement === e));
  await page.keyboard.type('xyz');
  assert.equal(await input.inputValue(), 'xyz', 'the keystrokes went to the input');
  await input.fill('');
  const pick = async (label) => {
    await input.focus();
    await page.keyboard.type('@');
    const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: label }).first();
    await row.waitFor({ timeout: 10_000 });
    await row.click();
  };
  const chips = chat().locator('.composer-chips .chip');
  await pick('The selection');
  await until('the selection chip', async () => (await chips.count()) === 1);
  await pick('Problems of the workspace');
  await until('the problems chip', async () => (await chips.count()) === 2);
  await pick('Files and folders');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible' });
  await box.fill('package.json');
  const fileRow = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'package.json' }).first();
  await fileRow.waitFor();
  await fileRow.click(); // in a multi-select pick, a click checks the row
  await page.locator('.quick-input-widget').filter({ hasText: '1 Selected' }).waitFor({ timeout: 10_000 });
  await page.locator('.quick-input-widget .monaco-button').filter({ hasText: 'OK' }).first().click();
  await until('the file chip', async () => (await chips.count()) === 3);
  assert.match((await input.inputValue()), /^$/, 'the @ typed is not left in the input');
  await shot('14', 'chips');
  const from = model.requests.length;
  await ask('Summarize the attachments');
  await until('the answer', async () => /Summary: done\./.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  await waitIdle();
  const sent = model.requests.slice(from).map((r) => JSON.stringify(r.messages)).join('\n');
  assert.match(sent, /hello\.txt/, 'the selection\'s file');
  assert.match(sent, /package\.json/, 'the file');
  assert.match(sent, /Value expected|Expected/i, 'the problem of bad.json');
  assert.equal(await chat().locator('.msg.user').last().locator('.chip').count(), 3, 'the prompt shows its chips');
  assert.equal(await chips.count(), 0, 'the composer is empty again');
  await shot('14', 'sent-with-context');
  // Slash commands with completion.
  await input.focus();
  await page.keyboard.type('/');
  const menu = chat().locator('.slash-menu');
  // The panel's six, then the folder's custom command (.claude/commands/greet.md).
  await until('the completion', async () => (await menu.locator('.slash-item').count()) === 7);
  assert.match((await menu.locator('.slash-item').last().textContent()) ?? '', /\/greet WHO\s*Greet someone the house way/);
  await shot('14', 'slash-completion');
  await page.keyboard.type('sta');
  assert.equal(await menu.locator('.slash-item').count(), 1);
  await page.keyboard.press('Enter');
  await until('the status in the conversation', async () => /State: idle/.test((await chat().locator('.notice').last().textContent()) ?? ''));
  await shot('14', 'slash-status');
  // The model picker (loom.models / loom.setModel) is not covered here yet:
  // it did not show in code-server in the lead's run (not yet done).
});
