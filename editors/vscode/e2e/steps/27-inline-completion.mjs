// Step 27: inline completion (LSP 3.18) from the user's own FIM model
// (a scripted llama.cpp /infill on loopback, fim.mjs). Turned on in the
// user's settings while loom-lsp runs: loom-lsp registers
// textDocument/inlineCompletion (client/registerCapability) with no
// restart; the status item names the model; typing in a file shows the
// ghost text from the model, made from the unsaved buffer; Tab accepts
// it; the status item turns asking off (typing then asks nothing) and on;
// turned off in the settings, loom-lsp unregisters it and the item goes.
import * as assert from 'node:assert/strict';
import { editUserSettings, editorText, focusedElement, openFile, page, runCommand, shot, step, until } from '../harness.mjs';
import { startFim } from '../fim.mjs';

/** Gives the keyboard back to add.py's editor, its cursor where it was. */
async function focusEditor() {
  await runCommand('View: Focus Active Editor Group');
  await until('add.py\'s editor to have the keyboard', async () =>
    page.evaluate(() => !!document.activeElement?.closest('.editor-group-container.active .monaco-editor')), 15_000, 50);
}

/**
 * Moves the cursor with the keys a user presses and waits for the status
 * bar to say it is at line:col. Under load, keys pressed right after the
 * editor took the keyboard back can miss it (seen: Control+End lost, the
 * text then typed on the line before); the keys (which land in the same
 * place however often they are pressed) are pressed again until the
 * cursor is there.
 */
async function cursorTo(line, col, keys) {
  const at = page.locator('.statusbar-item').filter({ hasText: new RegExp(`^Ln ${line}, Col ${col}$`) });
  await until(`the cursor at Ln ${line}, Col ${col}`, async () => {
    for (const k of keys) {
      await page.keyboard.press(k);
    }
    return at.first().waitFor({ timeout: 3_000 }).then(() => true, () => false);
  }, 60_000, 0);
}

/** The ghost text drawn in the active editor. */
async function ghostText() {
  const parts = await page.locator('.editor-group-container.active .monaco-editor .ghost-text-decoration, ' +
    '.editor-group-container.active .monaco-editor .ghost-text').allTextContents();
  return parts.join('').replace(/\u00a0/g, ' ');
}

step('27. inline completion: turned on in the settings, the model\'s ghost text shows as you type; Tab accepts; the status item turns it off and on', async () => {
  const fim = await startFim((b) => (/return $/.test(b.prompt) ? 'a + b' : 'a * b'));
  try {
    await editUserSettings({
      'loom.completion.api': 'infill',
      'loom.completion.baseUrl': fim.url,
      // The word suggestions' widget stays away: the ghost text alone.
      'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    });
    // Registered without a restart: the status item names the model.
    const item = page.locator('.statusbar-item').filter({ hasText: 'llama.cpp /infill' }).first();
    await item.waitFor({ timeout: 60_000 });
    assert.equal(await item.locator('.codicon-sparkle').count(), 1, 'on');
    await openFile('add.py');
    // Line 2, after its indentation: type as a user does.
    await cursorTo(2, 5, ['Control+Home', 'ArrowDown', 'End']);
    await page.keyboard.type('return ', { delay: 30 });
    await until('the ghost text from the model', async () => (await ghostText()).includes('a + b'), 60_000, 100);
    await shot('27', 'ghost-text');
    // From the unsaved buffer: the cursor's line and the lines before it.
    const asked = fim.requests.find((r) => r.prompt === '    return ');
    assert.ok(asked, `a request at "    return ": ${JSON.stringify(fim.requests.map((r) => r.prompt))}`);
    assert.equal(asked.input_prefix, 'def add(a, b):\n');
    assert.match(asked.input_suffix, /^\n\n\ndef mul\(a, b\):/);
    await page.keyboard.press('Tab');
    await until('the suggestion accepted', async () => (await editorText('add.py')).includes('return a + b'));
    await shot('27', 'accepted');

    // Off from the status item: typing asks nothing.
    await item.click();
    await until('the item says off', async () => (await item.locator('.codicon-circle-slash').count()) === 1);
    await shot('27', 'switched-off');
    // Back to the editor (the click took the focus to the status bar).
    await focusEditor();
    await cursorTo(6, 5, ['Control+End', 'ArrowUp', 'End']);
    await page.keyboard.type('return ', { delay: 30 });
    await until('"return " typed in mul', async () => (await editorText('add.py')).includes('def mul(a, b):    return '));
    // On again: the next keystroke asks (and no request came while off).
    await item.click();
    await until('the item says on', async () => (await item.locator('.codicon-sparkle').count()) === 1);
    await focusEditor();
    await page.keyboard.type('b', { delay: 30 });
    await until('a request after switching on', async () => fim.requests.some((r) => r.prompt === '    return b'), 60_000, 100)
      .catch(async (e) => {
        throw new Error(`${e.message}; the model was asked ${JSON.stringify(fim.requests.map((r) => r.prompt))}; ` +
          `add.py reads ${JSON.stringify(await editorText('add.py'))}; the keyboard is at ${await focusedElement()}; ` +
          `the item reads ${JSON.stringify(await item.textContent())}`);
      });
    const whileOff = fim.requests.filter((r) => /^ {4}(r|re|ret|retu|retur|return|return )$/.test(r.prompt) && r.input_prefix.includes('def mul'));
    assert.deepEqual(whileOff.map((r) => r.prompt), [], 'nothing was asked while it was off');
    await until('the ghost text again', async () => (await ghostText()).includes('a * b'), 60_000, 100);

    // Off in the settings: unregistered, the item goes.
    await editUserSettings({ 'loom.completion.api': undefined, 'loom.completion.baseUrl': undefined, 'editor.quickSuggestions': undefined });
    await until('the status item gone', async () => (await item.count()) === 0, 60_000, 100);
    await shot('27', 'unregistered');
  } finally {
    await fim.close();
  }
});
