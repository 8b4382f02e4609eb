// Step 7: a window reload between turns redraws everything.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('7. a window reload redraws the conversation with its diffs, commits, notices and stop marks', async () => {
  const before = await panelCounts();
  assert.ok(before.diffs >= 1 && before.openDiff >= 1 && before.commits >= 1 && before.retries >= 1 && before.errors >= 1 && before.stopped >= 1,
    `the conversation has something of each to keep: ${JSON.stringify(before)}`);
  const r = await reloadWindow();
  times.reloadToWorkbench = r.workbench;
  times.reloadToExtension = r.extension;
  let after;
  await until('the conversation redrawn with everything', async () => {
    after = await panelCounts();
    return JSON.stringify(after) === JSON.stringify(before);
  }, 60_000, 25).catch((e) => {
    throw new Error(`${e.message}\nbefore ${JSON.stringify(before)}\nafter  ${JSON.stringify(after)}`);
  });
  times.reloadToRedrawn = Date.now() - r.t0;
  assert.equal(await chat().locator('.msg.user').filter({ hasText: 'Run the greeting script' }).count(), 1);
  assert.match((await chat().locator('.log').textContent()) ?? '', /ok, ready for more/);
  assert.equal(await chat().locator('.bar .state').textContent(), 'idle');
  await chat().locator('.card .diff-body').first().scrollIntoViewIfNeeded();
  await shot('07', 'after-reload-diff-kept');
  await chat().locator('.log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
  await shot('07', 'after-reload');
}, 300_000);
