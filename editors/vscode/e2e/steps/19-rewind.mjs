// Step 19: Restore checkpoint on a prompt in the panel, and Redo.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chat, editorText, git, page, shot, step, until, waitIdle, ws } from '../harness.mjs';

const prompt = 'Frame hello.txt with a header and a footer';
const read = (name) => fs.readFileSync(path.join(ws, name), 'utf8');

step('19. rewind: the prompt\'s Restore checkpoint (files and conversation) takes the agent hunk back, keeps the typed line, puts the prompt back in the input; Redo; conversation only leaves the files', async () => {
  // The user types a line at the end of hello.txt and saves.
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').first().click();
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('typed by me\n');
  await page.keyboard.press('Control+S');
  await until('the typed line on disk', async () => read('hello.txt').includes('typed by me'));
  const before = read('hello.txt');
  assert.ok(before.startsWith('# greeting\n'), `the agent's hunk of step 18 is there: ${JSON.stringify(before)}`);

  // The prompt's control opens a menu of the three restores, by keyboard.
  const item = chat().locator('.msg.user').filter({ hasText: prompt }).last();
  const open = item.locator('button.restore-checkpoint');
  await open.focus();
  await page.keyboard.press('Enter');
  const menu = item.locator('.checkpoint-menu');
  await menu.waitFor();
  assert.equal(await open.getAttribute('aria-expanded'), 'true');
  assert.deepEqual(await menu.locator('button').allTextContents(), ['Files and conversation', 'Files only', 'Conversation only', 'Cancel']);
  assert.equal(await chat().locator(':focus').textContent(), 'Files and conversation', 'the menu takes the focus');
  await shot('19', 'checkpoint-menu');
  await page.keyboard.press('Enter');

  await until('the agent hunk taken back, the typed line kept', async () => read('hello.txt') === 'Hello, world!\nA second line.\ntyped by me\n');
  assert.match(git('log', '-1', '--format=%s').trim(), /^loom: rewind to turn \d+$/);
  await until('the tab to reload the restored file', async () => {
    const t = await editorText('hello.txt');
    return !t.includes('# greeting') && t.includes('typed by me');
  });
  // The chat says it, with a Redo; the prompt is out of the conversation and back in the input.
  const said = chat().locator('.notice').filter({ hasText: /Restored the files and the conversation to before turn \d+/ }).last();
  await said.waitFor();
  const words = (await said.textContent()) ?? '';
  assert.match(words, /Files restored: hello\.txt/);
  assert.match(words, /Your own edits were kept in hello\.txt/);
  await until('the prompt back in the input', async () => (await chat().locator('textarea.input').inputValue()) === prompt);
  assert.equal(await chat().locator('.msg.user').filter({ hasText: prompt }).count(), 0, 'the rewound prompt left the conversation');
  await shot('19', 'rewound');

  await said.locator('button.redo').focus();
  await page.keyboard.press('Enter');
  await until('redo brings the hunk back', async () => read('hello.txt') === '# greeting\nHello, world!\nA second line.\ntyped by me\n');
  await until('the tab to show it', async () => (await editorText('hello.txt')).includes('# greeting'));
  await chat().locator('.notice').filter({ hasText: /^Redone: the rewind is undone/ }).last().waitFor();
  await until('the prompt back in the conversation', async () => (await chat().locator('.msg.user').filter({ hasText: prompt }).count()) === 1);
  assert.match(git('log', '-1', '--format=%s').trim(), /^loom: redo/);
  assert.equal(await chat().locator('textarea.input').inputValue(), '', 'the prompt left the input again');
  await shot('19', 'redone');

  // Conversation only: the files stay as they are, the prompt comes back; Redo again.
  const files = read('hello.txt');
  const head = git('rev-parse', 'HEAD').trim();
  await chat().locator('.msg.user').filter({ hasText: prompt }).last().locator('button.restore-checkpoint').click();
  await chat().locator('.checkpoint-menu button[data-restore="conversation"]').last().click();
  const conv = chat().locator('.notice').filter({ hasText: /Restored the conversation to before turn \d+/ }).last();
  await conv.waitFor();
  assert.doesNotMatch((await conv.textContent()) ?? '', /Files restored/);
  await until('the prompt back in the input', async () => (await chat().locator('textarea.input').inputValue()) === prompt);
  assert.equal(read('hello.txt'), files, 'the files stay');
  assert.equal(git('rev-parse', 'HEAD').trim(), head, 'no commit');
  await shot('19', 'conversation-only');
  await conv.locator('button.redo').click();
  await until('the prompt back in the conversation', async () => (await chat().locator('.msg.user').filter({ hasText: prompt }).count()) === 1);
  await until('the input empty again', async () => (await chat().locator('textarea.input').inputValue()) === '');
  await waitIdle();
});
