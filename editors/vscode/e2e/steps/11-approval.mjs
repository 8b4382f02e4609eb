// Steps 11-12: the approval card and approval rules.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('11. approval card: a 420-character command and a 9-line script are readable in full before Allow; "every command" needs a confirmation and is never the first Shift+Tab stop', async () => {
  const width = await chat().locator('body').evaluate((b) => b.clientWidth);
  times.panelWidthPx = width;
  // Scrolled up: the approval below the fold must come into view by itself.
  await chat().locator('.log').evaluate((log) => { log.scrollTop = 0; });
  await ask('Run the long command');
  const card = chat().locator('.card.tool').filter({ hasText: 'the-end-ZZZ' }).last();
  await card.locator('button.deny').waitFor();
  const cmd = card.locator('pre.command');
  assert.equal(await cmd.textContent(), '$ ' + longCommand, 'the whole command, not a clipped line');
  const fit = await cmd.evaluate((pre) => {
    pre.scrollTop = pre.scrollHeight; // a long command scrolls: its end is reached
    const r = document.createRange();
    const text = pre.firstChild;
    r.setStart(text, text.length - 11);
    r.setEnd(text, text.length);
    const end = r.getBoundingClientRect();
    const box = pre.getBoundingClientRect();
    const log = document.querySelector('.log').getBoundingClientRect();
    const cardBox = pre.closest('.card').getBoundingClientRect();
    return {
      noHorizontalClip: pre.scrollWidth <= pre.clientWidth + 1,
      endInside: end.left >= box.left - 1 && end.right <= box.right + 1 && end.top >= box.top - 1 && end.bottom <= box.bottom + 1,
      cardInView: cardBox.bottom > log.top && cardBox.top < log.bottom,
      lines: Math.round(box.height / parseFloat(getComputedStyle(pre).lineHeight || '16')),
    };
  });
  assert.ok(fit.noHorizontalClip, 'the command wraps: nothing is clipped on the right');
  assert.ok(fit.endInside, 'the end of the command ("rm -rf ./the-end-ZZZ") is on screen in the card');
  assert.ok(fit.cardInView, 'the approval scrolled into view');
  await card.scrollIntoViewIfNeeded();
  await shot('11', 'long-command-readable');
  // Shift+Tab from the input reaches Deny first, never "every command".
  await chat().locator('textarea.input').focus();
  await page.keyboard.press('Shift+Tab');
  const focused = await chat().locator(':focus').evaluate((e) => e.className);
  assert.match(focused, /\bdeny\b/, `first Shift+Tab stop: ${focused}`);
  // "Always allow every command" asks again before it does anything.
  await card.locator('button.always').click();
  await card.locator('button.always-confirm').waitFor();
  assert.equal(await card.locator('button.allow').count(), 1, 'still asking');
  await shot('11', 'every-command-confirmation');
  await card.locator('.confirm button', { hasText: 'Cancel' }).click();
  assert.equal(await card.locator('button.always-confirm').count(), 0);
  await card.locator('button.deny').click();
  await waitIdle();

  await ask('Run the setup script');
  const script = chat().locator('.card.tool').filter({ hasText: 'LAST-LINE-9' }).last();
  await script.locator('button.deny').waitFor();
  const lines = await script.locator('pre.command').evaluate((pre) => pre.textContent.split('\n'));
  assert.equal(lines.length, 9, 'the script keeps its 9 lines');
  assert.equal(lines[8], 'echo LAST-LINE-9');
  const visible = await script.locator('pre.command').evaluate((pre) => pre.scrollHeight <= pre.clientHeight + 1);
  assert.ok(visible, 'nine lines fit without scrolling');
  await shot('11', 'nine-line-script');
  await script.locator('button.deny').click();
  await waitIdle();
});

step('12. "Always allow `npm test`": npm test then runs unasked, npm run x still asks', async (t) => {
  await ask('Run npm test');
  const card = chat().locator('.card.tool').filter({ hasText: '$ npm test' }).last();
  await card.locator('button.rule-exact').waitFor();
  assert.match((await card.locator('button.rule-exact').textContent()) ?? '', /Always allow npm test/);
  await shot('12', 'rule-choices');
  await card.locator('button.rule-exact').click();
  await until('npm test ran', async () => (await card.getAttribute('class'))?.includes('s-succeeded'));
  await waitIdle();
  const npmCards = chat().locator('.card.tool').filter({ hasText: '$ npm test' });
  const before = await npmCards.count();
  await ask('Run npm test');
  await until('the second npm test card', async () => (await npmCards.count()) === before + 1);
  const again = npmCards.nth(before);
  await until('the second npm test to run unasked', async () => (await again.getAttribute('class'))?.includes('s-succeeded'));
  assert.equal(await again.locator('.approval').count(), 0, 'not asked');
  await waitIdle();
  await ask('Run npm run x');
  const other = chat().locator('.card.tool').filter({ hasText: '$ npm run x' }).last();
  await other.locator('button.deny').waitFor();
  await shot('12', 'other-command-asks');
  await other.locator('button.deny').click();
  await waitIdle();
});
