// Step 12b: "Always allow every command…" (confirmed) is the user's rule, kept by
// loom-lsp outside the repository; "Loom: Approval Rules…" takes it back.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('12b. "Always allow every command…", confirmed: the next command runs unasked, no workspace setting is written; "Loom: Approval Rules…" removes it and commands are asked again', async () => {
  const settings = path.join(ws, '.vscode', 'settings.json');
  const settingsBefore = fs.existsSync(settings) ? fs.readFileSync(settings, 'utf8') : null;
  const xCards = chat().locator('.card.tool').filter({ hasText: '$ npm run x' });
  let n = await xCards.count();
  await ask('Run npm run x');
  await until('the npm run x card', async () => (await xCards.count()) === n + 1);
  const card = xCards.nth(n);
  await card.locator('button.always').click();
  await card.locator('button.always-confirm').click();
  await until('npm run x ran', async () => (await card.getAttribute('class'))?.includes('s-succeeded'));
  await waitIdle();
  assert.match((await card.locator('.approval').textContent()) ?? '', /every command/);
  await shot('12b', 'every-command-allowed');
  assert.equal(fs.existsSync(settings) ? fs.readFileSync(settings, 'utf8') : null, settingsBefore,
    'the workspace settings are untouched (a trust-bound loom.tools.bash would be held back)');

  const greetings = chat().locator('.card.tool').filter({ hasText: 'echo hello-from-bash' });
  const before = await greetings.count();
  await ask('Run the greeting script');
  await until('the greeting card', async () => (await greetings.count()) === before + 1);
  const next = greetings.nth(before);
  await until('the next command to run unasked', async () => (await next.getAttribute('class'))?.includes('s-succeeded'));
  assert.equal(await next.locator('button.allow').count(), 0, 'not asked');
  await waitIdle();

  await runCommand('Loom: Approval Rules…');
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'every command' }).first();
  await row.waitFor();
  assert.equal(await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'npm test' }).count(), 1, 'the npm test rule is listed too');
  await shot('12b', 'approval-rules');
  await row.click();
  const remove = page.locator('.monaco-dialog-box .monaco-button').filter({ hasText: 'Remove' }).first();
  await remove.click();
  await toast(/removed the rule every command/);

  n = await xCards.count();
  await ask('Run npm run x');
  await until('the npm run x card', async () => (await xCards.count()) === n + 1);
  const asked = xCards.nth(n);
  await asked.locator('button.deny').waitFor();
  await shot('12b', 'asked-again');
  await asked.locator('button.deny').click();
  await waitIdle();
});
