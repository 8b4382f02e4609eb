// Step 22: the header's model picker (loom.models, loom.setModel).
import * as assert from 'node:assert/strict';
import { ask, chat, model, shot, step, until, waitIdle } from '../harness.mjs';

step('22. the model picker lists the server\'s models; switching sets the conversation\'s model and the next request carries it', async () => {
  const picker = chat().locator('.bar select.model-picker');
  await until('the model picker', async () => picker.isVisible(), 30_000, 100);
  // The scripted server's /v1/models (e2e/model.mjs).
  assert.deepEqual(await picker.locator('option').allTextContents(), ['scripted-coder', 'scripted-mini']);
  assert.equal(await picker.inputValue(), 'scripted-coder');
  await shot('22', 'model-picker');
  await picker.selectOption('scripted-mini');
  await until('the switch said in the conversation', async () =>
    /now uses the model scripted-mini/.test((await chat().locator('.notice').last().textContent()) ?? ''));
  await until('the header on the new model', async () => (await picker.inputValue()) === 'scripted-mini');
  const oks = chat().locator('.msg.assistant').filter({ hasText: 'ok, ready for more' });
  let n = await oks.count();
  const from = model.requests.length;
  await ask('Say ok');
  await until('the answer', async () => (await oks.count()) > n);
  await waitIdle();
  const sent = model.requests.slice(from).map((r) => r.model);
  assert.ok(sent.length >= 1 && sent.every((m) => m === 'scripted-mini'), `the requests went to scripted-mini: ${sent}`);
  await shot('22', 'switched');
  // Back, for the steps after.
  await picker.selectOption('scripted-coder');
  await until('back on scripted-coder', async () => (await picker.inputValue()) === 'scripted-coder');
  n = await oks.count();
  const back = model.requests.length;
  await ask('Say ok');
  await until('the answer', async () => (await oks.count()) > n);
  await waitIdle();
  const after = model.requests.slice(back).map((r) => r.model);
  assert.ok(after.length >= 1 && after.every((m) => m === 'scripted-coder'), `the requests went to scripted-coder again: ${after}`);
});

step('22b. the effort picker sets the conversation\'s reasoning effort: the next request carries it; default sends none again', async () => {
  const effort = chat().locator('.bar select.effort-picker');
  await until('the effort picker', async () => effort.isVisible(), 30_000, 100);
  assert.equal(await effort.inputValue(), '', 'the configured effort (none set)');
  assert.deepEqual((await effort.locator('option').allTextContents()).slice(0, 3), ['effort: default', 'effort: none', 'effort: minimal']);
  await effort.selectOption('high');
  await until('the change said in the conversation', async () =>
    /with reasoning effort high/.test((await chat().locator('.notice').last().textContent()) ?? ''));
  await until('the picker on high', async () => (await effort.inputValue()) === 'high');
  await shot('22b', 'effort-picker');
  const oks = chat().locator('.msg.assistant').filter({ hasText: 'ok, ready for more' });
  let n = await oks.count();
  let from = model.requests.length;
  await ask('Say ok');
  await until('the answer', async () => (await oks.count()) > n);
  await waitIdle();
  const sent = model.requests.slice(from).map((r) => r.reasoning_effort);
  assert.ok(sent.length >= 1 && sent.every((e) => e === 'high'), `the requests carried reasoning_effort high: ${sent}`);
  // Back to the default: no effort sent.
  await effort.selectOption('');
  await until('back on the default', async () => (await effort.inputValue()) === '' &&
    /configured|server's default/.test((await chat().locator('.notice').last().textContent()) ?? ''));
  n = await oks.count();
  from = model.requests.length;
  await ask('Say ok');
  await until('the answer', async () => (await oks.count()) > n);
  await waitIdle();
  const after = model.requests.slice(from).map((r) => r.reasoning_effort);
  assert.ok(after.length >= 1 && after.every((e) => e === undefined), `no reasoning_effort sent: ${after}`);
});
