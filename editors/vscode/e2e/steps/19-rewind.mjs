// Step 19: rewind to a checkpoint, and redo.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  addRules, ask, chat, editUserSettings, editorText, git, headerState, here, longCommand, model, nineLines, openFile,
  openPanel, openWorkbench, page, panelCounts, reloadWindow, restartModel, runCommand, shot, step, stopModel, story,
  times, toast, until, waitIdle, ws,
} from '../harness.mjs';

step('19. rewind: Restore Checkpoint (files and conversation) takes the agent hunk back, keeps the typed line; Redo', async () => {
  // The user types a line at the end of hello.txt and saves.
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').first().click();
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('typed by me\n');
  await page.keyboard.press('Control+S');
  await until('the typed line on disk', async () => fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8').includes('typed by me'));
  await runCommand('Loom: Restore Checkpoint…');
  const turn = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Frame hello.txt' }).first();
  await turn.waitFor();
  await shot('19', 'checkpoints');
  await turn.click();
  const both = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Files and conversation' }).first();
  await both.waitFor();
  await both.click();
  await until('the agent hunk taken back, the typed line kept', async () =>
    fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8') === 'Hello, world!\nA second line.\ntyped by me\n');
  assert.equal(git('log', '-1', '--format=%s').trim(), 'loom: rewind to turn ' + git('log', '-1', '--format=%s').trim().split(' ').pop());
  await until('the tab to reload the restored file', async () => {
    const t = await editorText('hello.txt');
    return !t.includes('# greeting') && t.includes('typed by me');
  });
  // The rewound prompt comes back for editing.
  await until('the prompt back in an input box', async () => (await page.locator('.quick-input-widget input').inputValue()) === 'Frame hello.txt with a header and a footer');
  await shot('19', 'rewound');
  await page.keyboard.press('Escape');
  const restored = await toast(/restored to before turn/);
  await restored.locator('.monaco-button').filter({ hasText: 'Redo' }).click();
  await until('redo brings the hunk back', async () =>
    fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8') === '# greeting\nHello, world!\nA second line.\ntyped by me\n');
  await until('the tab to show it', async () => (await editorText('hello.txt')).includes('# greeting'));
  await shot('19', 'redone');
});
