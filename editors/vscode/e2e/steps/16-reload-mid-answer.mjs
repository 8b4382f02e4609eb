// Step 16: a reload in the middle of an answer.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

// The reload restarts the extension host and with it loom-lsp, so the turn
// in flight is cut: the panel says so ("Interrupted: the window reloaded
// during this turn"), its header is idle (nothing runs any more), and
// everything drawn before stays (the record kept across the reload, not
// loom.history's poorer transcript).
step('16. a reload keeps the commits with their Undo, the quick-fix prompt as shown, and marks a turn it cut as interrupted; Undo of the newer commit by its sha', async () => {
  await ask('Write the first note');
  await until('the first commit', async () => (await chat().locator('.commit').filter({ hasText: 'note1' }).count()) === 1, 30_000);
  await waitIdle();
  await ask('Write the second note');
  await until('the second commit', async () => (await chat().locator('.commit').filter({ hasText: 'note2' }).count()) === 1, 30_000);
  await waitIdle();
  const fix = chat().locator('.msg.user').filter({ hasText: 'Fix this problem' }).first();
  // Step 8's quick-fix prompt (absent when E2E_STEPS leaves step 8 out).
  const fixShown = (await fix.count()) > 0 ? await fix.textContent() : null;
  const answers = await chat().locator('.msg.assistant').count();
  await ask('Tell me a long story');
  await until('the new story to stream', async () => (await chat().locator('.msg.assistant').count()) > answers &&
    /word3 /.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  const before = await panelCounts();
  const r = await reloadWindow();
  await until('the conversation redrawn, the cut turn marked', async () => (await chat().locator('.turn-end.interrupted').count()) === 1, 60_000, 25);
  times.reloadMidTurnToRedrawn = Date.now() - r.t0;
  const after = await panelCounts();
  assert.deepEqual({ ...after, interrupted: 0 }, { ...before, interrupted: 0 }, 'everything kept');
  if (fixShown !== null) {
    assert.equal(await fix.textContent(), fixShown, 'the quick-fix prompt as the user saw it');
  }
  assert.equal(await chat().locator('.bar .state').textContent(), 'idle');
  assert.match((await chat().locator('.turn-end.interrupted').textContent()) ?? '', /Interrupted: the window reloaded during this turn/);
  assert.equal(await chat().locator('.msg.user').last().textContent().then((s) => /Tell me a long story/.test(s ?? '')), true, 'the cut prompt is kept');
  // Kept as far as it was seen (word3 at least; drawn again as markdown, the trailing space goes).
  assert.match((await chat().locator('.msg.assistant').last().textContent()) ?? '', /word0 word1 word2 word3\b/, 'the cut answer is kept');
  await chat().locator('.turn-end.interrupted').scrollIntoViewIfNeeded();
  await shot('16', 'interrupted-after-reload');
  // Undo the newest commit by its sha (loom.undo {sha}).
  const second = chat().locator('.commit').filter({ hasText: 'note2' });
  const sha = await second.getAttribute('data-sha');
  assert.equal(git('rev-parse', 'HEAD').trim(), sha);
  await second.locator('button.undo').click();
  await until('the commit undone', async () => (await second.getAttribute('class'))?.includes('is-undone'));
  assert.ok(!fs.existsSync(path.join(ws, 'note2.txt')), 'note2.txt removed');
  await shot('16', 'undo-by-sha');
  // A second reload: the restored conversation was kept again, with the
  // interrupted mark and the undone commit.
  const kept = await panelCounts();
  assert.equal(kept.interrupted, 1);
  assert.equal(kept.undone, after.undone + 1, 'one more commit undone (step 4 undid one in the same conversation)');
  await reloadWindow();
  let again;
  await until('the conversation redrawn again', async () => {
    again = await panelCounts();
    return JSON.stringify(again) === JSON.stringify(kept);
  }, 60_000, 25).catch((e) => {
    throw new Error(`${e.message}\nbefore ${JSON.stringify(kept)}\nafter  ${JSON.stringify(again)}`);
  });
});
