// Step 18: review edits before they apply.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('18. review: with "Review edits before they apply", a change waits; one hunk accepted, one rejected with a comment', async () => {
  await runCommand('Loom: Review Edits Before They Apply (toggle)');
  await toast(/edits now wait for your review/);
  // The server pulls the changed setting; give it a status round trip.
  await until('tools.edits = review on the server', async () => {
    const settings = JSON.parse(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8'));
    return settings['loom.tools.edits'] === 'review';
  });
  const before = git('rev-parse', 'HEAD').trim();
  await ask('Frame hello.txt with a header and a footer');
  const notice = await toast(/Loom proposes a change to hello\.txt \(2 hunks\)/);
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'Hello, world!\nA second line.\n', 'nothing written before the review');
  await shot('18', 'proposal');
  await notice.locator('.monaco-button').filter({ hasText: 'Review…' }).click();
  const row2 = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'hunk 2' }).first();
  await row2.waitFor();
  await row2.click(); // unchecks hunk 2
  await shot('18', 'pick-hunks');
  await page.locator('.quick-input-widget input').press('Enter');
  const box = page.locator('.quick-input-widget input');
  await until('the comment box', async () => ((await page.locator('.quick-input-widget').textContent()) ?? '').includes('Why reject'));
  await box.fill('no footer please');
  await box.press('Enter');
  await toast(/applied 1 hunk\(s\), rejected 1/);
  await shot('18', 'review-diff');
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').first().click();
  await until('the tab to show the accepted hunk only', async () => {
    const t = await editorText('hello.txt');
    return t.includes('# greeting') && !t.includes('# end');
  });
  await waitIdle();
  assert.notEqual(git('rev-parse', 'HEAD').trim(), before, 'the accepted hunk is committed');
  const shown = git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(shown, ['+# greeting']);
  assert.match(JSON.stringify(model.requests.at(-1).messages.at(-1)), /hunk 2 rejected by the user: no footer please/);
  await shot('18', 'accepted-one');
});
