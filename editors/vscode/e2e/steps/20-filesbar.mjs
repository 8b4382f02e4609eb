// Step 20: the changed-files bar above the input.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, git, here, page, reloadWindow, runCommand, shot, step, toast, until, waitIdle, ws,
} from '../harness.mjs';

addRules(
  {
    when: /sign hello\.txt and add a signature file/i,
    replies: [
      { tool: { name: 'read_file', args: { path: 'hello.txt' } } },
      { tool: { name: 'edit_file', args: { path: 'hello.txt', old_string: 'Hello, world!', new_string: 'Hello, signed world!' } } },
      { tool: { name: 'write_file', args: { path: 'sig.txt', content: 'signed by loom\n' } } },
      { text: ['Signed hello.txt and wrote sig.txt.'] },
    ],
  },
  {
    when: /generate the version file/i,
    reply: { tool: { name: 'bash', args: { command: 'printf "v1\\n" > version.txt' } } },
    afterTool: { text: ['Generated version.txt.'] },
  },
  {
    when: /generate the build stamp/i,
    reply: { tool: { name: 'bash', args: { command: 'printf "stamp\\n" > stamp.txt' } } },
    afterTool: { text: ['Generated stamp.txt.'] },
  },
);

const read = (name) => fs.readFileSync(path.join(ws, name), 'utf8');
const bar = () => chat().locator('section.filesbar');
const row = (p) => bar().locator(`.fb-file[data-path="${p}"]`);
const shownPaths = async () => (await bar().isHidden()) ? [] : bar().locator('.fb-file').evaluateAll((ls) => ls.map((l) => l.dataset.path));

/** Runs a command through the approval card's Allow. */
async function allowCommand(prompt, text) {
  await ask(prompt);
  const card = chat().locator('.card.tool').filter({ hasText: text }).last();
  await card.locator('button.allow').click();
  await waitIdle();
}

step('20. changed-files bar: an agent edit shows with +/−, opens a diff, Undo on one file keeps the typed line; a command\'s new file is kept (committed) or discarded', async () => {
  // Edits apply at once (step 18 turned review off again).
  await until('tools.edits no longer review', async () => JSON.parse(read('.vscode/settings.json'))['loom.tools.edits'] === undefined);
  // Turning review off removed the value (no widening "auto" written), so
  // the folder's trusted settings stay in force: no need to trust again.
  await until('the model in the header', async () => (await chat().locator('.bar .model').textContent()) === 'scripted-coder', 30_000, 100);
  // What earlier steps left in the bar (the redone hunk of step 19) is kept first.
  if (!(await bar().isHidden())) {
    await bar().locator('button.fb-keep-all').click();
    await until('the bar empty', async () => bar().isHidden());
  }

  await ask('Sign hello.txt and add a signature file');
  await until('the bar lists both files', async () => JSON.stringify(await shownPaths()) === '["hello.txt","sig.txt"]');
  await waitIdle();
  await until('the counts from git', async () => (await row('hello.txt').locator('.fb-stat').textContent()) === '+1−1');
  assert.equal(await row('sig.txt').locator('.fb-stat').textContent(), '+1−0');
  assert.equal(await bar().locator('.fb-toggle').textContent(), '2 files changed');
  assert.equal(await bar().locator('.fb-toggle').getAttribute('aria-expanded'), 'true');
  await shot('20', 'bar');

  // Open diff: VS Code's diff editor, before the agent's change ↔ now.
  await row('hello.txt').locator('button.fb-name').click();
  const tab = page.locator('.tabs-container .tab').filter({ hasText: "hello.txt (Loom's changes)" }).first();
  await tab.waitFor();
  await until('the diff editor with both sides', async () => (await page.locator('.monaco-diff-editor').count()) > 0);
  await shot('20', 'diff');

  // The user types a line of their own, then Undo on hello.txt (by keyboard) takes only the agent's hunk back.
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').filter({ hasNotText: "Loom's changes" }).first().click();
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('after the agent\n');
  await page.keyboard.press('Control+S');
  await until('the typed line on disk', async () => read('hello.txt').endsWith('typed by me\nafter the agent\n'));
  const before = git('rev-parse', 'HEAD').trim();
  await row('hello.txt').locator('button.fb-undo').focus();
  await page.keyboard.press('Enter');
  await until('the agent hunk gone, the typed lines kept', async () =>
    read('hello.txt') === '# greeting\nHello, world!\nA second line.\ntyped by me\nafter the agent\n');
  assert.equal(read('sig.txt'), 'signed by loom\n', 'the other file keeps the agent\'s change');
  assert.equal(git('log', '-1', '--format=%s').trim(), "loom: undo the agent's changes to hello.txt");
  assert.equal(git('rev-parse', 'HEAD~1').trim(), before, 'one commit on top');
  await until('hello.txt out of the bar', async () => JSON.stringify(await shownPaths()) === '["sig.txt"]');
  await chat().locator('.notice').filter({ hasText: /undid the agent's changes to hello\.txt/ }).last().waitFor();
  await shot('20', 'undone-one');

  // A window reload keeps the bar (sig.txt, counted again from git).
  await reloadWindow();
  await until('sig.txt in the bar after the reload', async () => JSON.stringify(await shownPaths()) === '["sig.txt"]', 60_000);
  await until('its counts', async () => (await row('sig.txt').locator('.fb-stat').textContent()) === '+1−0');

  // Keep sig.txt: it stays, the bar empties.
  await row('sig.txt').locator('button.fb-keep').click();
  await until('the bar hidden', async () => bar().isHidden());
  assert.equal(read('sig.txt'), 'signed by loom\n');

  // A command creates a file: a command change, kept (committed).
  await allowCommand('Generate the version file', 'version.txt');
  await until('version.txt in the bar as a command change', async () => (await row('version.txt').count()) === 1);
  assert.match((await row('version.txt').locator('.fb-badge').first().textContent()) ?? '', /^command: printf/);
  assert.deepEqual(await row('version.txt').locator('button').allTextContents(), ['version.txt', 'Keep', 'Discard']);
  assert.equal(git('ls-files', 'version.txt').trim(), '', 'not committed before Keep');
  await axeInFourThemes();
  await shot('20', 'command-change');

  // Another command asks while the bar is shown: Shift+Tab from the input still reaches Deny first
  // (the bar is above the input on screen, after it in the tab order).
  await ask('Generate the build stamp');
  const card = chat().locator('.card.tool').filter({ hasText: 'stamp.txt' }).last();
  await card.locator('button.deny').waitFor();
  await chat().locator('textarea.input').focus();
  await page.keyboard.press('Shift+Tab');
  assert.match(await chat().locator(':focus').evaluate((e) => e.className), /\bdeny\b/, 'first Shift+Tab stop from the input');
  await chat().locator('button.send').focus();
  await page.keyboard.press('Tab');
  assert.match(await chat().locator(':focus').evaluate((e) => e.className), /\bmode-picker\b/, 'Tab after Send reaches the mode selector under the input');
  await page.keyboard.press('Tab');
  assert.match(await chat().locator(':focus').evaluate((e) => e.className), /\bfb-toggle\b/, 'the next Tab reaches the bar');
  await card.locator('button.allow').click();
  await waitIdle();
  await until('stamp.txt in the bar', async () => JSON.stringify(await shownPaths()) === '["stamp.txt","version.txt"]');

  await row('version.txt').locator('button.fb-keep').click();
  await until('version.txt committed', async () => git('ls-files', 'version.txt').trim() === 'version.txt');
  await until('version.txt out of the bar', async () => JSON.stringify(await shownPaths()) === '["stamp.txt"]');
  assert.equal(git('status', '--porcelain', '--', 'version.txt'), '');

  // The other command's new file, discarded: it is gone.
  await row('stamp.txt').locator('button.fb-undo').click();
  await until('stamp.txt discarded', async () => !fs.existsSync(path.join(ws, 'stamp.txt')));
  await until('the bar hidden', async () => bar().isHidden());
  await shot('20', 'discarded');
});

/** axe-core over the panel with the bar (and a prompt's restore menu) shown, in the four themes. */
async function axeInFourThemes() {
  const axeSource = fs.readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  const menuButton = chat().locator('.msg.user button.restore-checkpoint').last();
  await menuButton.click();
  const found = {};
  for (const [theme, cls] of [['Dark Modern', 'vscode-dark'], ['Light Modern', 'vscode-light'],
    ['Default High Contrast', 'vscode-high-contrast'], ['Default High Contrast Light', 'vscode-high-contrast-light']]) {
    await editUserSettings({ 'workbench.colorTheme': theme });
    await until(`the panel in ${theme}`, async () => chat().locator('body').evaluate((b, c) => b.classList.contains(c), cls), 30_000, 100);
    const frame = await (await chat().locator('body').elementHandle()).ownerFrame();
    await frame.evaluate(axeSource);
    const res = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    found[theme] = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    await shot('20', `bar-${cls}`);
  }
  await editUserSettings({});
  await menuButton.click();
  const all = Object.entries(found).filter(([, v]) => v.length > 0);
  assert.equal(all.length, 0, `serious axe violations with the bar shown:\n${all.map(([t, v]) => `${t}:\n  ${v.join('\n  ')}`).join('\n')}`);
}
