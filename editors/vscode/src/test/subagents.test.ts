import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { Item } from '../shared/messages';
import { canStop, subagentState, subagentStateWords } from '../shared/subagents';
import { Transcript } from '../transcript';
import type { SubagentParams } from '../wire.gen';

type SubagentItem = Extract<Item, { kind: 'subagent' }>;

function note(over: Partial<SubagentParams>): SubagentParams {
  return {
    folder: '/w', conversation: 'loom-p', turn: 1, callId: 'w1', child: '1-w1', childConversation: 'loom-c',
    agent: 'worker', task: 'run the tests', depth: 1, state: 'running', tokens: 0, ...over,
  };
}

test('a subagent is one card per child, replaced by each loom/subagent: state, last activity, tokens', () => {
  const t = new Transcript('/w', 'w');
  const card = t.subagent(note({})) as SubagentItem;
  assert.equal(card.kind, 'subagent');
  assert.deepEqual([card.agent, card.task, card.state, card.tokens], ['worker', 'run the tests', 'running', 0]);
  assert.equal(canStop(card), true, 'a running child offers Stop');

  const waiting = t.subagent(note({ state: 'waiting', activity: 'waits for your approval: bash npm test', tokens: 15 })) as SubagentItem;
  assert.equal(waiting.id, card.id, 'the same child keeps its card');
  assert.equal(subagentStateWords(waiting), 'waiting for your approval');
  assert.equal(canStop(waiting), true, 'a waiting child offers Stop');

  const other = t.subagent(note({ callId: 'w2', child: '1-w2', task: 'read the docs' }));
  assert.notEqual(other.id, card.id, 'another child has a card of its own');

  assert.equal((t.subagent(note({ callId: 'w3', child: '1-w3', model: 'claude-haiku-4-5' })) as SubagentItem).model, 'claude-haiku-4-5',
    'the model its definition chose');
  const done = t.subagent(note({ state: 'done', tokens: 40 })) as SubagentItem;
  assert.equal(done.state, 'done');
  assert.equal(done.tokens, 40);
  assert.equal(done.activity, 'waits for your approval: bash npm test', 'its end keeps its last activity');
  assert.equal(canStop(done), false, 'a child that ended offers no Stop');
  assert.equal(t.items.filter((it) => it.kind === 'subagent').length, 3);
});

test('Stop pressed says stopping until the server says stopped; the states the card knows', () => {
  const t = new Transcript('/w', 'w');
  const card = t.subagent(note({})) as SubagentItem;
  card.stopping = true;
  assert.equal(subagentStateWords(card), 'stopping…');
  const still = t.subagent(note({ activity: 'bash running' })) as SubagentItem;
  assert.equal(subagentStateWords(still), 'stopping…', 'an update while it stops keeps saying so');
  const stopped = t.subagent(note({ state: 'stopped' })) as SubagentItem;
  assert.equal(subagentStateWords(stopped), 'stopped');
  assert.equal(stopped.stopping, false);
  assert.equal(subagentState('failed'), 'failed');
  assert.equal(subagentState('something new'), 'running', 'an unknown word is shown as running');
});
