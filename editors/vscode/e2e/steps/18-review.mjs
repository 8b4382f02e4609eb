// Step 18: review edits before they apply, in the panel. The header's
// toggle "Review edits" turns tools.edits to review; a change the model
// proposes waits in its tool card with Accept / Reject per hunk and a
// comment box (nothing reaches the buffer or the disk before the
// decision); Open diff shows it in VS Code's diff editor with Accept /
// Reject CodeLens above each hunk, which decide in the same card and
// send the decision once every hunk is decided. With the panel out of
// sight, VS Code's notification stands in for the card.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editorText, editUserSettings, git, here, model, openFile, page, reloadWindow, runCommand, shot, step, times, toast, until,
  waitIdle, ws,
} from '../harness.mjs';

const lensBefore = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';
const lensAfter = 'one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nNINE\nten\n';

// The proposal waits for the test (the panel hidden first): openGate.
let openGate = () => {};
const gate = new Promise((r) => { openGate = r; });

addRules({
  when: /shout two and nine in lens\.txt/i,
  replies: [
    { tool: { name: 'read_file', args: { path: 'lens.txt' } } },
    { tool: { name: 'write_file', args: { path: 'lens.txt', content: lensAfter } }, gate: () => gate },
    { text: ['Shouted what you accepted.'] },
  ],
});

// Two files in one response: both are proposed at once.
addRules({
  when: /write the two review notes/i,
  reply: { text: ['Writing both notes.'], tools: [
    { name: 'write_file', args: { path: 'note-a.txt', content: 'alpha\n' } },
    { name: 'write_file', args: { path: 'note-b.txt', content: 'beta\n' } },
  ] },
  afterTool: { text: ['Noted your decisions.'] },
});

const lensShouted = 'one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';
const fmtCommand = "sed -i 's/^one$/ONE/' lens.txt && printf 'eleven\\n' >> lens.txt";
addRules({
  when: /run the lens formatter/i,
  reply: { text: ['Formatting.'], tool: { name: 'bash', args: { command: fmtCommand } } },
  afterTool: { text: ['Formatted as you decided.'] },
});

/** axe-core over the panel (with the card open) in the four themes of step 15: the serious violations found, by theme. */
async function axeInThemes(card) {
  const axeSource = fs.readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  const found = {};
  for (const [theme, cls] of [['Dark Modern', 'vscode-dark'], ['Light Modern', 'vscode-light'],
    ['Default High Contrast', 'vscode-high-contrast'], ['Default High Contrast Light', 'vscode-high-contrast-light']]) {
    await editUserSettings({ 'workbench.colorTheme': theme });
    await until(`the panel in ${theme}`, async () => chat().locator('body').evaluate((b, c) => b.classList.contains(c), cls), 30_000, 100);
    const frame = await (await chat().locator('body').elementHandle()).ownerFrame();
    await frame.evaluate(axeSource);
    const res = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const serious = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    if (serious.length) {
      found[theme] = serious.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    }
    await card.scrollIntoViewIfNeeded();
    await shot('18', `card-${cls}`);
  }
  await editUserSettings({});
  return found;
}

/** The tool card of the newest proposal. */
function newestReview() {
  return chat().locator('.card.tool:has(.edit-review)').last();
}

/** Clicks the header toggle and waits until the server has the setting. */
async function toggleReview(on) {
  const box = chat().locator('.bar .review-toggle input');
  await box.waitFor();
  assert.equal(await box.isChecked(), !on, `the toggle is ${on ? 'off' : 'on'} first`);
  const held = chat().locator('.notice').filter({ hasText: /since you trusted/ });
  const heldBefore = await held.count();
  await box.click();
  // On writes "review"; off removes the value (a written "auto" is a
  // widening value: the server would hold back the folder's trusted
  // values, .loom.toml's included, as changed since trusted).
  await until(`loom.tools.edits ${on ? '= review' : 'removed'} in the workspace settings`, async () => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8'))['loom.tools.edits'] === (on ? 'review' : undefined);
    } catch {
      return false;
    }
  });
  // The box changes when loom.status says the server has it (not on the click).
  await until(`the toggle ${on ? 'on' : 'off'} after loom.status`, async () => (await box.isChecked()) === on);
  assert.equal(await held.count(), heldBefore, 'the toggle does not make the server hold the folder\'s trusted values back');
}

step('18. review in the panel: the header toggle; with the panel hidden a notification, Open Diff and the CodeLens (Accept hunk 1, Reject hunk 2 sends); the edit card (Accept hunk 1, Reject hunk 2 with a comment, Submit)', async () => {
  // loom's own writes (an accepted hunk, a command's bytes, a discard) are
  // no "changed on disk" news, in the chat or to the model.
  const news = chat().locator('.notice').filter({ hasText: /changed on disk/ });
  const newsBefore = await news.count();
  const requestsBefore = model.requests.length;
  await toggleReview(true);

  // --- lens.txt: the user's own file, for the reload and the CodeLens ---------
  // Committed, as the user's.
  fs.writeFileSync(path.join(ws, 'lens.txt'), lensBefore);
  git('add', 'lens.txt');
  git('commit', '-qm', 'lens.txt');

  // --- two files in one response: both at once; Escape and a reload keep them as left --
  let card;
  const exists = (name) => fs.existsSync(path.join(ws, name));
  await ask('Write the two review notes');
  const open = chat().locator('.card.tool:has(.edit-review.r-open)');
  await until('both files of the response proposed at once', async () => (await open.count()) === 2);
  const cardA = open.filter({ hasText: 'note-a.txt' });
  const cardB = open.filter({ hasText: 'note-b.txt' });
  await cardA.scrollIntoViewIfNeeded();
  await shot('18', 'two-files-at-once');
  // Decided so far: note-a.txt rejected; a comment typed on note-b.txt.
  const rejectA = cardA.locator('.review-hunk[data-hunk="1"] button.review-reject');
  await rejectA.click();
  await until('note-a.txt rejected', async () => (await rejectA.getAttribute('aria-pressed')) === 'true');
  await cardB.locator('textarea.review-comment').click();
  await page.keyboard.type('beta is fine');
  // Escape (from the input, as a user stops a turn) stops no review: it says so.
  await chat().locator('textarea.input').focus();
  await page.keyboard.press('Escape');
  await chat().locator('.notice').filter({ hasText: /Escape does not cancel it/ }).last().waitFor({ timeout: 30_000 });
  assert.equal(await open.count(), 2, 'Escape left both proposals waiting');
  assert.notEqual((await chat().locator('.bar .state').textContent())?.trim(), 'idle', 'the turn still waits for the review');
  await shot('18', 'escape-keeps-review');
  // A window reload (loom-lsp restarts with it): the proposals, the decision and the comment come back.
  const r = await reloadWindow();
  await until('both proposals back after the reload', async () => (await open.count()) === 2, 60_000);
  times['review: reload -> proposals back'] = Date.now() - r.t0;
  await until('note-a.txt still rejected', async () => (await rejectA.getAttribute('aria-pressed')) === 'true');
  assert.equal(await cardB.locator('textarea.review-comment').inputValue(), 'beta is fine', 'the typed comment is back');
  assert.equal(await chat().locator('.edit-review.r-closed').count(), 0, 'no card says "not reviewed"');
  assert.ok(!exists('note-a.txt') && !exists('note-b.txt'), 'nothing written before the decision');
  await cardA.scrollIntoViewIfNeeded();
  await shot('18', 'reloaded-review-kept');
  // Decided in any order: note-b.txt first.
  await cardB.locator('.review-hunk[data-hunk="1"] button.review-accept').click();
  await until('note-b.txt accepted', async () => (await cardB.locator('.review-hunk[data-hunk="1"] button.review-accept').getAttribute('aria-pressed')) === 'true');
  await cardB.locator('button.review-submit').click();
  await until('note-b.txt written', async () => exists('note-b.txt') && fs.readFileSync(path.join(ws, 'note-b.txt'), 'utf8') === 'beta\n');
  await chat().locator('.card.tool:has(.edit-review)').filter({ hasText: 'note-a.txt' }).locator('button.review-submit').click();
  await waitIdle();
  assert.ok(!exists('note-a.txt'), 'the rejected file is not written');
  const results = JSON.stringify(model.requests.at(-1).messages.filter((m) => m.role === 'tool'));
  assert.match(results, /rejected by the user; nothing was written/);
  assert.match(results, /applied; the user says: beta is fine/);
  assert.match((await chat().locator('.log').textContent()) ?? '', /Noted your decisions\./);

  // --- with the panel out of sight: the notification, Open Diff, the CodeLens --
  const reads = await chat().locator('.card.tool[data-tool="read_file"]').count();
  const asked = model.requests.length;
  await ask('Shout two and nine in lens.txt');
  // The model's write_file waits at the gate: the panel goes out of sight
  // first, so VS Code's notification stands in for the card.
  await until('the file read', async () => (await chat().locator('.card.tool[data-tool="read_file"]').count()) > reads
    && model.requests.slice(asked).some((r) => r.messages.at(-1)?.role === 'tool'));
  await runCommand('View: Show Explorer');
  await page.locator('.explorer-folders-view').first().waitFor();
  openGate();
  const notice = await toast(/Loom proposes a change to lens\.txt \(2 hunks\); nothing is written until you decide/);
  assert.equal(fs.readFileSync(path.join(ws, 'lens.txt'), 'utf8'), lensBefore, 'nothing written before the review');
  const openDiff = notice.locator('.monaco-button').filter({ hasText: 'Open Diff' });
  await openDiff.waitFor();
  for (const b of ['Review in Chat', 'Accept All', 'Reject All']) {
    assert.equal(await notice.locator('.monaco-button').filter({ hasText: b }).count(), 1, `the notification offers ${b}`);
  }
  await shot('18', 'notification-panel-hidden');
  await openDiff.click();
  const diff = page.locator('.monaco-diff-editor').last();
  await diff.waitFor({ timeout: 30_000 });
  const lens = (title) => diff.locator('.codelens-decoration a').filter({ hasText: title }).first();
  await lens('Accept hunk 1').waitFor({ timeout: 30_000 });
  await lens('Reject hunk 2').waitFor();
  assert.match((await diff.textContent()) ?? '', /TWO/, 'the proposed side has the change');
  await shot('18', 'codelens');
  await lens('Accept hunk 1').click();
  await lens('Hunk 1: accepted').waitFor();
  // The card and the CodeLens keep one set of decisions.
  await runCommand('Loom: Open the Chat');
  card = newestReview();
  await card.locator('.edit-review.r-open').waitFor({ timeout: 30_000 });
  await until('the card to show hunk 1 accepted', async () =>
    (await card.locator('.review-hunk[data-hunk="1"] button.review-accept').getAttribute('aria-pressed')) === 'true');
  assert.equal(fs.readFileSync(path.join(ws, 'lens.txt'), 'utf8'), lensBefore, 'one hunk decided: nothing sent yet');
  await shot('18', 'codelens-one-decided');
  await lens('Reject hunk 2').click();
  // Every hunk decided: the decision goes, only hunk 1 lands.
  await until('hunk 1 (only) on disk', async () => fs.readFileSync(path.join(ws, 'lens.txt'), 'utf8') === 'one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n');
  // A lens without a command is text, not a link.
  await diff.locator('.codelens-decoration').filter({ hasText: 'Loom: applied 1; rejected 2' }).first().waitFor();
  await card.locator('.edit-review.r-decided').waitFor();
  await shot('18', 'codelens-decided');
  await waitIdle();
  assert.match(JSON.stringify(model.requests.at(-1).messages.at(-1)), /applied in part: hunk 2 rejected by the user/);
  await runCommand('View: Close Editor');

  // --- a command's changes: on disk already; Keep one hunk, Discard the other -----
  await ask('Run the lens formatter');
  card = chat().locator('.card.tool[data-tool="bash"]').last();
  await until('the approval or the review', async () =>
    (await card.locator('button.allow').count()) > 0 || (await card.locator('.edit-review.r-open').count()) > 0);
  if (await card.locator('button.allow').count()) {
    await card.locator('button.allow').click();
  }
  await card.locator('.edit-review.r-open').waitFor({ timeout: 30_000 });
  assert.match((await card.locator('.review-state').textContent()) ?? '', /changed a file \(2 hunks\); they are on disk, not committed: keep or discard them/);
  assert.equal(fs.readFileSync(path.join(ws, 'lens.txt'), 'utf8'), 'ONE' + lensShouted.slice(3) + 'eleven\n', 'the command ran');
  const headBefore = git('rev-parse', 'HEAD').trim();
  const hunks = card.locator('.review-hunk');
  assert.equal(await hunks.nth(0).locator('button.review-accept').textContent(), 'Keep');
  await hunks.nth(0).locator('button.review-accept').click();
  await until('hunk 1 kept', async () => (await hunks.nth(0).locator('button.review-accept').getAttribute('aria-pressed')) === 'true');
  await hunks.nth(1).locator('button.review-reject').click();
  await until('hunk 2 discarded', async () => (await hunks.nth(1).locator('button.review-reject').getAttribute('aria-pressed')) === 'true');
  await card.scrollIntoViewIfNeeded();
  await shot('18', 'command-keep-discard');
  await card.locator('button.review-submit').click();
  await until('the discarded hunk taken back, the kept one there', async () =>
    fs.readFileSync(path.join(ws, 'lens.txt'), 'utf8') === 'ONE' + lensShouted.slice(3));
  await card.locator('.edit-review.r-decided').waitFor();
  assert.match((await card.locator('.review-state').textContent()) ?? '', /^Kept hunk \S+; discarded hunk \S+\.$/);
  await waitIdle();
  assert.notEqual(git('rev-parse', 'HEAD').trim(), headBefore, 'the kept hunk is committed');
  assert.deepEqual(git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l)), ['-one', '+ONE']);
  assert.match(JSON.stringify(model.requests.at(-1).messages.filter((m) => m.role === 'tool').at(-1)),
    /kept this command's changes to lens\.txt in part: hunk \S+ discarded/);
  await shot('18', 'command-decided');

  // --- the panel's edit card ------------------------------------------------------
  await openFile('hello.txt');
  const original = 'Hello, world!\nA second line.\n';
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), original);
  const before = git('rev-parse', 'HEAD').trim();
  await ask('Frame hello.txt with a header and a footer');
  card = newestReview();
  await card.locator('.edit-review.r-open').waitFor({ timeout: 30_000 });
  assert.match((await card.locator('.status-word').textContent()) ?? '', /waiting for your review/);
  assert.match((await card.locator('.review-state').textContent()) ?? '', /2 hunks; nothing is written until you decide/);
  assert.equal(await page.locator('.notification-toast').filter({ hasText: 'Loom proposes' }).count(), 0, 'no notification while the panel shows the card');
  // Nothing reached the buffer or the disk.
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), original, 'nothing on disk before the decision');
  assert.doesNotMatch(await editorText('hello.txt'), /# greeting|# end/, 'nothing in the buffer before the decision');
  const submit = card.locator('button.review-submit');
  assert.equal(await submit.isDisabled(), true, 'Submit waits until every hunk is decided');
  await card.scrollIntoViewIfNeeded();
  await shot('18', 'card');

  // Hunk 1: a click. Hunk 2: the keyboard (focus, Enter), the focus staying on it.
  await card.locator('.review-hunk[data-hunk="1"] button.review-accept').click();
  await until('hunk 1 accepted', async () =>
    (await card.locator('.review-hunk[data-hunk="1"] button.review-accept').getAttribute('aria-pressed')) === 'true');
  const reject2 = card.locator('.review-hunk[data-hunk="2"] button.review-reject');
  assert.equal(await reject2.getAttribute('aria-label'), 'Reject hunk 2 of hello.txt');
  await reject2.focus();
  await reject2.press('Enter');
  await until('hunk 2 rejected', async () => (await reject2.getAttribute('aria-pressed')) === 'true');
  await until('the focus kept on Reject after the redraw', async () =>
    chat().locator('body').evaluate(() => document.activeElement?.getAttribute('aria-label') === 'Reject hunk 2 of hello.txt'));
  const comment = card.locator('textarea.review-comment');
  await comment.click();
  await page.keyboard.type('no footer please');
  assert.equal(await submit.isDisabled(), false);
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), original, 'decided but not submitted: nothing written');
  await shot('18', 'card-decided');
  // Readable and labelled in the four themes, decisions and comment shown.
  const serious = await axeInThemes(card);
  assert.deepEqual(serious, {}, 'no serious axe violations with the edit card open');
  assert.equal(await card.locator('textarea.review-comment').inputValue(), 'no footer please', 'the comment survives the theme changes');
  const t0 = Date.now();
  await submit.click();
  await until('the buffer to show the accepted hunk only', async () => {
    const t = await editorText('hello.txt');
    return t.includes('# greeting') && !t.includes('# end');
  });
  times['review: Submit -> buffer changed'] = Date.now() - t0;
  await card.locator('.edit-review.r-decided').waitFor();
  assert.match((await card.locator('.review-state').textContent()) ?? '', /Applied hunk 1; rejected hunk 2\./);
  assert.match((await card.locator('.review-comment-sent').textContent()) ?? '', /no footer please/);
  await waitIdle();
  assert.notEqual(git('rev-parse', 'HEAD').trim(), before, 'the accepted hunk is committed');
  const shown = git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(shown, ['+# greeting']);
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), '# greeting\n' + original);
  assert.match(JSON.stringify(model.requests.at(-1).messages.at(-1)), /hunk 2 rejected by the user: no footer please/);
  await card.scrollIntoViewIfNeeded();
  await shot('18', 'card-applied');

  // Off again: edits apply at once for the steps after this one.
  assert.equal(await news.count(), newsBefore, 'no "changed on disk" notice for loom\'s own writes');
  const told = model.requests.slice(requestsBefore).map((r) => JSON.stringify(r.messages.slice(-3))).filter((m) => /changed on disk since you read them/.test(m));
  assert.equal(told.length, 0, `the model was told of loom's own writes: ${told[0] ?? ''}`);
  await toggleReview(false);
}, 0); // no budget for the whole step: each wait is bounded by what the user waits for
