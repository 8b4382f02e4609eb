// Step 17: the first run without a model.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('17. first run without a model: a setup card in the panel leads to a working prompt, with no toast', async () => {
  await editUserSettings({ 'loom.model.provider': undefined, 'loom.model.baseUrl': undefined, 'loom.model.name': undefined });
  const card = chat().locator('section.setup');
  await until('the setup card', async () => card.isVisible(), 30_000, 100);
  assert.equal(await chat().locator('.bar .model').textContent(), 'no model');
  assert.ok(await chat().locator('.bar .model').isVisible(), '"no model" shows in the header');
  assert.ok(!(await chat().locator('.bar select.model-picker').isVisible()), 'no model picker without a model');
  await shot('17', 'setup-card');
  const notes = await chat().locator('.notice').count();
  await ask('Say ok');
  await until('a new notice', async () => (await chat().locator('.notice').count()) > notes);
  const note = chat().locator('.notice').last();
  await until('the short notice', async () => /No model is set up yet/.test((await note.textContent()) ?? ''));
  assert.ok(((await note.textContent()) ?? '').split('\n').length <= 2, 'a short notice, not a 28-line error');
  assert.equal(await page.locator('.notifications-toasts .notification-toast').filter({ hasText: /model/i }).count(), 0, 'no toast');
  const t0 = Date.now();
  await card.locator('select.setup-server').selectOption({ label: 'Another OpenAI-compatible server' });
  // Not the values the folder was trusted with in step 1 (a new user's
  // first model never is): the user's settings need no folder trust.
  await card.locator('input.setup-base-url').fill(model.url.replace('127.0.0.1', 'localhost'));
  await card.locator('button.setup-list').click();
  await until('the models listed', async () => /2 model/.test((await card.locator('.setup-note').textContent()) ?? ''));
  assert.equal(await card.locator('input.setup-model').inputValue(), 'scripted-coder');
  await shot('17', 'setup-filled');
  await card.locator('button.setup-save').click();
  await until('the card to go', async () => !(await card.isVisible()), 30_000, 100);
  const input = chat().locator('textarea.input');
  await until('the prompt back in the input', async () => (await input.inputValue()) === 'Say ok');
  const oks = chat().locator('.msg.assistant').filter({ hasText: 'ok, ready for more' });
  const n = await oks.count();
  await input.press('Enter');
  await until('the answer', async () => (await oks.count()) > n);
  times.setupToAnswer = Date.now() - t0;
  await waitIdle();
  assert.equal(await page.locator('.notifications-toasts .notification-toast').filter({ hasText: /model/i }).count(), 0, 'no toast outlives the fix');
  assert.equal(await chat().locator('.notice.error').filter({ hasText: /since you trusted|not trusted/ }).count(), 0, 'no trust error about the model the user set');
  await chat().locator('.log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
  await shot('17', 'working-prompt');
  await editUserSettings({});
});
