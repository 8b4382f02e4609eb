// Step 21: two conversations of one folder in the panel — one keeps
// running while the other is read; the list (title, when, running badge),
// open, rename, delete with its confirmation; axe over the open list.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { addRules, ask, chat, editUserSettings, here, model, reloadWindow, shot, step, until, waitIdle } from '../harness.mjs';

const essayTitle = 'Write a long essay about looms';
const essay = ['ESSAY-START ', ...Array.from({ length: 30 }, (_, i) => `loomword${i} `), 'ESSAY-END'];

async function title() {
  return ((await chat().locator('.conv-toggle .conv-title').textContent()) ?? '').trim();
}

async function logText() {
  return (await chat().locator('main.log').textContent()) ?? '';
}

async function openList() {
  const toggle = chat().locator('button.conv-toggle');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') {
    await toggle.click();
  }
  await chat().locator('.conv-menu').waitFor({ state: 'visible' });
}

async function closeList() {
  const toggle = chat().locator('button.conv-toggle');
  if ((await toggle.getAttribute('aria-expanded')) === 'true') {
    await toggle.click();
  }
  await chat().locator('.conv-menu').waitFor({ state: 'hidden' });
}

function row(text) {
  return chat().locator('.conv-item', { hasText: text });
}

step('21. conversations: A streams on while B is asked and read; back to A, its whole answer and nothing of B; the list with its running badge; rename and delete (confirmed)', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  addRules(
    // A's answer stops after a few words until the test opens the gate: it
    // is still running however slow the machine is.
    { when: /write a long essay about looms/i, reply: { delayMs: 15, text: essay, holdAfter: 4, hold: () => gate } },
    { when: /what is two plus two/i, reply: { text: ['TWO-PLUS-', 'TWO-IS-FOUR'] } },
  );
  try {
    await waitIdle();
    // A: New in the header, then a long answer.
    await chat().locator('.bar button', { hasText: /^New$/ }).click();
    await until('a new, empty conversation', async () => (await chat().locator('.msg').count()) === 0 && (await title()) === 'New conversation');
    await ask(essayTitle);
    await until("A's answer to stream", async () => /loomword2/.test(await logText()));
    assert.equal(await chat().locator('button.send').textContent(), 'Stop', 'A is running');
    await until('the header to name A', async () => (await title()) === essayTitle);

    // B: New in the list; A goes on running.
    await openList();
    await chat().locator('.conv-menu .conv-new').click();
    await until('B shown, empty', async () => (await chat().locator('.msg').count()) === 0 && (await title()) === 'New conversation');
    await until('"1 other running" in the header', async () =>
      /1 other running/.test((await chat().locator('.conv-toggle .conv-running').textContent()) ?? ''));
    assert.equal(await chat().locator('button.send').textContent(), 'Send', "B's own button: A's Stop is not B's");
    await ask('What is two plus two?');
    await until("B's answer", async () => /TWO-PLUS-TWO-IS-FOUR/.test(await logText()));
    await waitIdle();
    assert.doesNotMatch(await logText(), /ESSAY|loomword/, "nothing of A's answer in B");
    // B's request went to B's conversation: nothing of A in it.
    const bReq = model.requests.find((r) => JSON.stringify(r.messages).includes('What is two plus two?'));
    assert.ok(bReq, "B's request reached the model");
    assert.doesNotMatch(JSON.stringify(bReq.messages), /essay about looms/i, "B's request carries nothing of A");

    // Each its own Stop: a long answer in B, stopped, leaves A running (A's answer ends whole below).
    await ask('Tell me a long story');
    await until("B's story to stream", async () => /\bword3\b/.test(await logText()));
    assert.equal(await chat().locator('button.send').textContent(), 'Stop');
    await chat().locator('button.send').click();
    await waitIdle();
    await chat().locator('.turn-end.cancelled').last().waitFor();

    // The list: A running, B shown.
    await openList();
    await until('A running in the list', async () => (await row(essayTitle).locator('.conv-state').textContent()) === 'running');
    const b = row('What is two plus two?');
    assert.equal(await b.getAttribute('class'), 'conv-item current');
    assert.equal(await b.locator('.conv-state').count(), 0, 'B is not running');
    assert.match((await row(essayTitle).locator('.conv-meta').textContent()) ?? '', /just now|min ago/);
    await shot('21', 'conversations');

    // A finishes while B is read: nothing of it in B.
    release();
    await until('A done: no running badge', async () => (await row(essayTitle).locator('.conv-state').count()) === 0, 60_000);
    assert.doesNotMatch(await logText(), /ESSAY|loomword/, "nothing of A's answer in B after it finished");

    // Back to A: its whole answer, with what arrived meanwhile, and nothing of B's.
    await row(essayTitle).locator('.conv-open').click();
    await until('A shown', async () => (await title()) === essayTitle);
    await chat().locator('.conv-menu').waitFor({ state: 'hidden' });
    const a = await logText();
    assert.match(a, /ESSAY-START loomword0 [\s\S]*loomword29 ESSAY-END/, "A's whole answer");
    assert.doesNotMatch(a, /TWO-PLUS|two plus two|\bword\d+|long story/i, "nothing of B's in A");
    assert.equal(await chat().locator('.turn-end.cancelled').count(), 0, "A was not stopped by B's Stop");
    assert.equal(await chat().locator('.msg.assistant').count(), 1, 'one answer');
    await waitIdle();
    await shot('21', 'back-to-a');

    // Keyboard: ↓ on the title opens the list on the conversation shown; Escape closes it.
    await chat().locator('button.conv-toggle').focus();
    await chat().locator('button.conv-toggle').press('ArrowDown');
    await chat().locator('.conv-menu').waitFor({ state: 'visible' });
    await until('the focus on the shown conversation', async () =>
      chat().locator('.conv-item.current .conv-open').evaluate((e) => e === document.activeElement));
    await chat().locator('.conv-item.current .conv-open').press('Escape');
    await chat().locator('.conv-menu').waitFor({ state: 'hidden' });
    assert.equal(await chat().locator('button.conv-toggle').evaluate((e) => e === document.activeElement), true, 'the focus back on the title');

    // Rename B in place; the server's list says the new title.
    await openList();
    await b.locator('.conv-rename').click();
    const input = chat().locator('.conv-item input.conv-rename-input');
    await input.fill('Arithmetic');
    await input.press('Enter');
    await closeList();
    await openList(); // asks loom.conversations again
    await until('B renamed on the server', async () => (await row('Arithmetic').count()) === 1);

    // Delete B: a confirmation first; Cancel keeps it, Delete deletes it.
    await row('Arithmetic').locator('.conv-delete').click();
    await chat().locator('.conv-confirm').waitFor();
    assert.match((await chat().locator('.conv-confirm').textContent()) ?? '', /Delete “Arithmetic”\?/);
    await chat().locator('.conv-confirm .conv-cancel').click();
    assert.equal(await row('Arithmetic').count(), 1, 'Cancel keeps it');
    await row('Arithmetic').locator('.conv-delete').click();
    await shot('21', 'delete-confirmation');
    await chat().locator('.conv-confirm .conv-confirm-delete').click();
    await until('B gone from the list', async () => (await row('Arithmetic').count()) === 0);
    await closeList();
    await openList();
    await until('the list from the server', async () => (await row(essayTitle).count()) === 1);
    assert.equal(await row('Arithmetic').count(), 0, 'B deleted on the server');
    assert.equal(await title(), essayTitle, 'A still shown');
    assert.match(await logText(), /loomword29 ESSAY-END/);

    // A window reload: the panel opens the conversation you were reading
    // (not the server's most recent), drawn from its own record; another
    // one opens from its journal, and back.
    await closeList();
    await reloadWindow();
    await until('A shown again after the reload', async () => (await title()) === essayTitle && /loomword29 ESSAY-END/.test(await logText()), 60_000);
    assert.doesNotMatch(await logText(), /TWO-PLUS/);
    await openList();
    const older = chat().locator('.conv-item:not(.current)').filter({ hasText: /turn/ });
    if ((await older.count()) > 0) {
      const name = ((await older.first().locator('.conv-name').textContent()) ?? '').trim();
      await older.first().locator('.conv-open').click();
      await until(`"${name}" shown`, async () => (await title()) === name && (await chat().locator('.msg.user').count()) > 0, 60_000);
      assert.doesNotMatch(await logText(), /ESSAY|loomword/, 'nothing of A in the older conversation');
      await shot('21', 'older-after-reload');
      await openList();
      await row(essayTitle).locator('.conv-open').click();
      await until('A shown again', async () => (await title()) === essayTitle && /loomword29 ESSAY-END/.test(await logText()), 60_000);
    }

    // axe over the open list, in the four themes.
    const axeSource = fs.readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
    const found = {};
    for (const [theme, cls] of [['Dark Modern', 'vscode-dark'], ['Light Modern', 'vscode-light'],
      ['Default High Contrast', 'vscode-high-contrast'], ['Default High Contrast Light', 'vscode-high-contrast-light']]) {
      await editUserSettings({ 'workbench.colorTheme': theme });
      await until(`the panel in ${theme}`, async () => chat().locator('body').evaluate((el, c) => el.classList.contains(c), cls), 30_000, 100);
      await openList();
      const frame = await (await chat().locator('body').elementHandle()).ownerFrame();
      await frame.evaluate(axeSource);
      const res = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      found[theme] = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
      await shot('21', `list-${cls}`);
    }
    await editUserSettings({});
    await closeList();
    const bad = Object.entries(found).filter(([, v]) => v.length > 0);
    assert.equal(bad.length, 0, `serious axe violations with the list open:\n${bad.map(([t, v]) => `${t}:\n  ${v.join('\n  ')}`).join('\n')}`);
  } finally {
    release();
  }
}, 240_000);
