// Step 24: a picture pasted into the composer (a thumbnail chip; loom.ask
// {images}; the model receives it as an image_url part), a file that is
// no picture refused at once with why; the folder's custom command
// (.claude/commands/greet.md) offered in the slash menu and expanded by
// loom-lsp.
import * as assert from 'node:assert/strict';
import { addRules, ask, chat, model, page, shot, step, until, waitIdle } from '../harness.mjs';

addRules(
  { when: /what is in the picture/i, reply: { text: ['A red square.'] } },
  { when: /Greet the team warmly, in the house style/i, reply: { text: ['Good day, team!'] } },
);

// A 4×4 red PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==';

/** Pastes a file into the panel's input as the clipboard would. */
async function paste(name, type, base64) {
  await chat().locator('textarea.input').evaluate((input, f) => {
    const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], f.name, { type: f.type }));
    input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  }, { name, type, base64 });
}

step('24. a pasted picture goes with the prompt (thumbnail chip); a non-picture is refused; the slash menu offers the folder\'s command', async () => {
  const input = chat().locator('textarea.input');
  await input.click();
  await paste('image.png', 'image/png', png);
  const chip = chat().locator('.composer-chips .chip-image');
  await chip.waitFor();
  assert.match((await chip.textContent()) ?? '', /pasted-1\.png \(1 KB\)/);
  assert.ok(await chip.locator('img.chip-thumb').evaluate((img) => img.complete && img.naturalWidth === 4), 'the thumbnail is drawn');
  await paste('notes.bmp', 'image/bmp', 'Qk0=');
  await until('the refusal said', async () => /notes\.bmp is not a picture Loom can send/.test((await chat().locator('.image-note').textContent()) ?? ''));
  assert.equal(await chat().locator('.composer-chips .chip-image').count(), 1, 'the refused file is not attached');
  await shot('24', 'pasted-picture');
  const from = model.requests.length;
  await ask('What is in the picture?');
  await until('the answer', async () => /A red square/.test((await chat().locator('.log .items').textContent()) ?? ''), 60_000);
  await waitIdle();
  const sent = model.requests.slice(from).find((r) => JSON.stringify(r.messages).includes('image_url'));
  assert.ok(sent, 'a request carried the picture');
  assert.ok(JSON.stringify(sent.messages).includes(`data:image/png;base64,${png}`), 'the picture\'s bytes, as pasted');
  assert.equal(await chat().locator('.composer-chips .chip-image').count(), 0, 'the chip went with the prompt');
  assert.match((await chat().locator('.msg.user').last().textContent()) ?? '', /pasted-1\.png \(1 KB\)/);
  assert.equal(await chat().locator('.image-note').textContent(), '');
  await shot('24', 'picture-sent');

  // The folder's custom command in the slash menu; Tab completes it, the words follow.
  await input.click();
  await page.keyboard.type('/gr');
  const menu = chat().locator('.slash-menu');
  await until('the custom command offered', async () => (await menu.locator('.slash-item').count()) === 1 &&
    /\/greet WHO\s*Greet someone the house way/.test((await menu.textContent()) ?? ''));
  await shot('24', 'slash-custom-command');
  await page.keyboard.press('Tab');
  assert.equal(await input.inputValue(), '/greet ');
  await page.keyboard.type('the team');
  const n = model.requests.length;
  await page.keyboard.press('Enter');
  await until('the expanded command answered', async () => /Good day, team!/.test((await chat().locator('.log .items').textContent()) ?? ''), 60_000);
  await waitIdle();
  assert.ok(model.requests.slice(n).some((r) => /Greet the team warmly, in the house style, in one line\./.test(JSON.stringify(r.messages))),
    'loom-lsp expanded /greet with its arguments');
});
