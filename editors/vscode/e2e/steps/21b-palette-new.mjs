// Step 21b: "Loom: New Conversation" from the command palette starts a
// new conversation, as the header's New and the list's "+ New
// conversation" do: the next prompt goes to the model without the
// previous conversation's history, under its own title, and the previous
// conversation stays in the list.
import * as assert from 'node:assert/strict';
import { addRules, ask, chat, model, runCommand, shot, step, until, waitIdle } from '../harness.mjs';

addRules(
  { when: /remember the word heron/i, reply: { text: ['Heron remembered.'] } },
  { when: /which bird did i name/i, reply: { text: ['You named no bird here.'] } },
);

step('21b. the palette\'s "Loom: New Conversation" starts a new conversation: the next prompt carries no earlier message', async () => {
  await waitIdle();
  await ask('Remember the word heron');
  await waitIdle();
  await until('the first prompt answered', async () => /Heron remembered\./.test((await chat().locator('main.log').textContent()) ?? ''));
  const earlier = ((await chat().locator('.conv-toggle .conv-title').textContent()) ?? '').trim();
  await runCommand('Loom: New Conversation');
  await until('a new, empty conversation', async () => (await chat().locator('.msg').count()) === 0);
  const asked = model.requests.length;
  await ask('Which bird did I name?');
  await waitIdle();
  const req = model.requests.slice(asked).find((r) => JSON.stringify(r.messages).includes('Which bird did I name'));
  assert.ok(req, 'the prompt reached the model');
  assert.doesNotMatch(JSON.stringify(req.messages), /heron/i, 'nothing of the earlier conversation in the request');
  assert.equal(req.messages.filter((m) => m.role === 'assistant').length, 0, 'no earlier answer in the request');
  const title = ((await chat().locator('.conv-toggle .conv-title').textContent()) ?? '').trim();
  assert.equal(title, 'Which bird did I name?');
  await chat().locator('button.conv-toggle').click();
  // The earlier conversation (where the heron prompt went) is still in the list.
  await chat().locator('.conv-item', { hasText: earlier }).first().waitFor();
  await shot('21b', 'palette-new-conversation');
  await chat().locator('button.conv-toggle').click();
}, 0);
