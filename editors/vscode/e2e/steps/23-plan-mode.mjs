// Step 23: plan mode — the composer's mode selector (loom.setMode), the
// todo list drawn above the input while the model works (loom/plan), a
// write refused in plan mode, the plan card (loom/planProposal): Keep
// planning with a comment the model reads, then Edit and Build this
// version (loom.decidePlan {accept, plan}) — agent mode again, the
// edited plan carried out.
import * as assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { addRules, ask, chat, model, shot, step, until, waitIdle, ws } from '../harness.mjs';

const list = (items) => ({ plan: items.map(([step, status]) => ({ step, status })) });

addRules({
  when: /plan the release notes/i,
  // One reply per tool result since the prompt (model.mjs).
  replies: [
    { text: ['Let me look first.'], tool: { name: 'update_plan', args: list([['Read the project', 'in_progress'], ['Write NOTES.md', 'pending'], ['Check it', 'pending']]) } },
    { tool: { name: 'write_file', args: { path: 'NOTES.md', content: 'too early\n' } } },
    { tool: { name: 'propose_plan', args: { plan: '## Release notes\n\n1. Write `NOTES.md` with **one** line\n2. Check it' } } },
    // After "Keep planning: …" the model revises.
    { tool: { name: 'propose_plan', args: { plan: '## Release notes\n\n1. Write `NOTES.md` with **two** lines\n2. Check it' } } },
    // After the accepted (edited) plan: agent mode.
    { tool: { name: 'update_plan', args: list([['Read the project', 'completed'], ['Write NOTES.md', 'in_progress'], ['Check it', 'pending']]) } },
    { tool: { name: 'write_file', args: { path: 'NOTES.md', content: 'first\nsecond\n' } } },
    { tool: { name: 'update_plan', args: list([['Read the project', 'completed'], ['Write NOTES.md', 'completed'], ['Check it', 'completed']]) } },
    { text: ['Wrote NOTES.md as planned.'] },
  ],
});

addRules(
  {
    when: /plan a clean start/i,
    reply: { tool: { name: 'propose_plan', args: { plan: '1. Write `CLEAN.md` saying clean' } } },
    afterTool: { text: ['(the plan goes on in a new conversation)'] },
  },
  {
    when: /Carry out this plan:[\s\S]*CLEAN\.md/,
    replies: [{ tool: { name: 'write_file', args: { path: 'CLEAN.md', content: 'clean\n' } } }, { text: ['Clean start done.'] }],
  },
);

/** The text of every message the model was sent in request r. */
const said = (r) => JSON.stringify(r.messages ?? []);

step('23. plan mode: the selector, the live checklist, a refused write, the plan card (comment, edit, build), agent mode again', async () => {
  const mode = chat().locator('select.mode-picker');
  await until('the mode selector', async () => mode.isVisible(), 30_000, 100);
  assert.deepEqual(await mode.locator('option').allTextContents(), ['Agent', 'Plan', 'Ask']);
  assert.equal(await mode.inputValue(), 'agent');
  await mode.selectOption('plan');
  await until('the conversation in plan mode (the selector stays on Plan)', async () =>
    (await mode.inputValue()) === 'plan' && (await chat().locator('.composer.read-only-mode').count()) === 1);
  const from = model.requests.length;
  await ask('Plan the release notes');
  const card = chat().locator('.plan-card.s-open');
  await card.waitFor({ timeout: 60_000 });
  // The checklist above the input, the current step highlighted.
  const checklist = chat().locator('details.plan-list');
  assert.ok(await checklist.isVisible());
  assert.match((await checklist.locator('summary').textContent()) ?? '', /Plan 0\/3/);
  assert.equal(await checklist.locator('.plan-step[aria-current="step"] .plan-text').textContent(), 'Read the project');
  // The write was refused, and the model read why; nothing on disk.
  assert.ok(!fs.existsSync(path.join(ws, 'NOTES.md')), 'NOTES.md written in plan mode');
  assert.ok(model.requests.slice(from).some((r) => /refused in plan mode/.test(said(r))), 'the model read the refusal');
  assert.match((await card.locator('.plan-body').textContent()) ?? '', /Write NOTES\.md with one line/);
  assert.match((await chat().locator('.bar .state').textContent()) ?? '', /./);
  await shot('23', 'plan-card-and-checklist');

  // Keep planning, with a comment: the model reads it and proposes again.
  await card.locator('button.plan-keep').click();
  await chat().locator('textarea.plan-comment').fill('two lines, please');
  await chat().locator('button.plan-send-comment').click();
  await until('the first card decided, a second one open', async () =>
    (await chat().locator('.plan-card.s-rejected').count()) === 1 &&
    /two lines/.test((await chat().locator('.plan-card.s-open .plan-body').textContent().catch(() => '')) ?? ''), 60_000);
  assert.match((await chat().locator('.plan-card.s-rejected .plan-answer').textContent()) ?? '', /Keep planning: two lines, please/);
  assert.ok(model.requests.slice(from).some((r) => /two lines, please/.test(said(r))), 'the model read the comment');

  // Edit the plan and build that version.
  const open = chat().locator('.plan-card.s-open');
  await open.locator('button.plan-edit').click();
  const editor = chat().locator('textarea.plan-editor');
  await editor.fill('## Release notes\n\n1. Write `NOTES.md` with two lines: first, second\n2. Check it\n3. Say so');
  await shot('23', 'plan-edit');
  await chat().locator('button.plan-build-edited').click();
  await until('NOTES.md written after the plan was accepted', async () => fs.existsSync(path.join(ws, 'NOTES.md')), 60_000);
  await until('the answer', async () => /Wrote NOTES\.md as planned/.test((await chat().locator('.log .items').textContent()) ?? ''), 60_000);
  await waitIdle(60_000);
  assert.equal(fs.readFileSync(path.join(ws, 'NOTES.md'), 'utf8'), 'first\nsecond\n');
  assert.ok(model.requests.slice(from).some((r) => /first, second/.test(said(r)) && /3\. Say so/.test(said(r))), 'the model was given the edited plan');
  assert.equal(await mode.inputValue(), 'agent', 'accepting the plan switched to agent mode');
  assert.equal(await chat().locator('.composer.read-only-mode').count(), 0);
  const accepted = chat().locator('.plan-card.s-accepted');
  assert.equal(await accepted.count(), 1);
  assert.match((await accepted.locator('.plan-answer').textContent()) ?? '', /Building your edited version/);
  // The list whole, each step done.
  assert.match((await checklist.locator('summary').textContent()) ?? '', /Plan 3\/3/);
  assert.equal(await checklist.locator('.plan-step.completed').count(), 3);
  await shot('23', 'plan-built');
  // Folded: the summary only.
  await checklist.locator('summary').click();
  assert.equal(await checklist.evaluate((d) => d.open), false);
  await shot('23', 'plan-folded');
  await checklist.locator('summary').click();
});

step('23b. a plan built "in a new conversation": the panel shows the new conversation, whose first prompt is the plan; the planning one stays in the list', async () => {
  const mode = chat().locator('select.mode-picker');
  await mode.selectOption('plan');
  await until('plan mode', async () => (await chat().locator('.composer.read-only-mode').count()) === 1);
  const title = chat().locator('.conv-title');
  await ask('Plan a clean start');
  const card = chat().locator('.plan-card.s-open');
  await card.waitFor({ timeout: 60_000 });
  const from = model.requests.length;
  await card.locator('button.plan-fresh').click();
  await until('CLEAN.md written', async () => fs.existsSync(path.join(ws, 'CLEAN.md')), 60_000);
  await until('the new conversation shown, with its answer', async () =>
    /Clean start done/.test((await chat().locator('.log .items').textContent()) ?? ''), 60_000);
  await waitIdle(60_000);
  const first = chat().locator('.log .items .msg.user').first();
  assert.match((await first.textContent()) ?? '', /Carry out this plan/);
  assert.equal(await chat().locator('.log .items').filter({ hasText: 'Plan a clean start' }).count(), 0, 'the planning conversation is not drawn in the new one');
  const fresh = model.requests.slice(from).find((r) => /Carry out this plan/.test(said(r)));
  assert.ok(fresh && !/Plan a clean start/.test(said(fresh)), 'the new conversation\'s request carries nothing of the planning');
  assert.equal(await mode.inputValue(), 'agent');
  await shot('23b', 'fresh-conversation');
  // The planning conversation is still listed.
  await title.click();
  await until('the list: the new conversation shown, the planning one beside it', async () =>
    /Carry out this plan/.test((await chat().locator('.conv-item.current').textContent().catch(() => '')) ?? '') &&
    (await chat().locator('.conv-item').count()) >= 2);
  await shot('23b', 'conversation-list');
  await title.click();
});
