import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Conversations } from '../conversations';
import { relativeTime } from '../reltime';
import type { Item } from '../shared/messages';

const F = '/w/proj';

function texts(items: readonly Item[]): string {
  return items.filter((i) => i.kind === 'assistant').map((i) => i.kind === 'assistant' ? i.text : '').join('|');
}

test('two conversations streaming at once: each delta goes to its own conversation, none to the one shown', () => {
  const c = new Conversations(() => 'proj');
  c.show(F, 'A');
  const a = c.route(F, 'A').transcript;
  a.asked(a.prompt('tell a long story'), 1);
  a.setState('CallingLlm', 1);
  // The server numbers a folder's deltas across its conversations.
  a.delta({ folder: F, conversation: 'A', turn: 1, seq: 1, text: 'Once ' });
  // New → B, shown; A goes on streaming.
  c.show(F, 'B');
  const b = c.route(F, 'B').transcript;
  b.asked(b.prompt('what is 2+2?'), 1);
  let seq = 2;
  for (const [conv, text] of [['A', 'upon '], ['B', '4'], ['A', 'a time.'], ['B', '.']] as const) {
    const t = c.route(F, conv).transcript;
    t.delta({ folder: F, conversation: conv, turn: 1, seq: seq++, text });
  }
  assert.equal(texts(c.find(F, 'A')!.items), 'Once upon a time.');
  assert.equal(texts(c.find(F, 'B')!.items), '4.');
  assert.equal(c.shown(F), b);
  assert.equal(c.isShown(F, 'A'), false);
  assert.equal(c.isShown(F, 'B'), true);
  // One delta checker per folder: interleaved conversations are no gap.
  assert.equal(a.takeGap(), false);
  assert.equal(b.takeGap(), false);
  // Back to A: the same transcript, with everything that arrived meanwhile.
  const back = c.show(F, 'A');
  assert.equal(back.fresh, false);
  assert.equal(back.transcript, a);
  assert.equal(texts(back.transcript.items), 'Once upon a time.');
});

test('a lost delta is still a gap when conversations interleave', () => {
  const c = new Conversations(() => 'proj');
  c.show(F, 'A');
  const a = c.route(F, 'A').transcript;
  const b = c.route(F, 'B').transcript;
  a.delta({ folder: F, conversation: 'A', turn: 1, seq: 1, text: 'x' });
  b.delta({ folder: F, conversation: 'B', turn: 1, seq: 2, text: 'y' });
  a.delta({ folder: F, conversation: 'A', turn: 1, seq: 4, text: 'z' });
  assert.equal(a.takeGap(), true);
});

test('until the server names a conversation, the drawn one becomes the first it names', () => {
  const c = new Conversations(() => 'proj');
  const first = c.shown(F);
  first.notice('info', 'loom-lsp is starting');
  assert.equal(first.conversation, '');
  const r = c.route(F, 'loom-1');
  assert.equal(r.adopted, true);
  assert.equal(r.transcript, first);
  assert.equal(first.conversation, 'loom-1');
  assert.equal(c.shownId(F), 'loom-1');
  // A second conversation named later is not adopted: it runs beside.
  const other = c.route(F, 'loom-2');
  assert.equal(other.adopted, false);
  assert.notEqual(other.transcript, first);
  assert.equal(c.shown(F), first);
  // An older loom-lsp names none: the shown one.
  assert.equal(c.route(F, undefined).transcript, first);
});

test('the list: new conversations first, titles, running and waiting badges, the shown one', () => {
  const c = new Conversations(() => 'proj');
  c.setList(F, [
    { id: 'old', title: 'fix the build', updated: '2026-11-24T10:00:00Z', turns: 3, live: false },
    { id: 'A', title: '', updated: '2026-11-24T10:20:00Z', turns: 0, live: true },
    { id: 'far', title: 'elsewhere', turns: 1, live: false, elsewhere: true },
  ]);
  const a = c.route(F, 'A').transcript;
  a.asked(a.prompt('write a poem\nabout rain'), 1);
  a.setState('ExecutingTools', 1);
  a.approval('ap1', 'bash', 'rm -rf build');
  c.show(F, 'B');
  const b = c.shown(F);
  const e = c.entries(F);
  assert.deepEqual(e.map((x) => x.id), ['B', 'old', 'A', 'far']);
  assert.deepEqual(e.map((x) => x.title), ['New conversation', 'fix the build', 'write a poem', 'elsewhere']);
  assert.deepEqual(e.map((x) => x.current), [true, false, false, false]);
  assert.deepEqual(e.map((x) => x.running), [false, false, true, false]);
  assert.equal(e[2].waiting, true);
  assert.equal(e[3].elsewhere, true);
  assert.equal(e[1].turns, 3);
  b.asked(b.prompt('and B'), 1);
  b.setState('CallingLlm', 1);
  assert.equal(c.entries(F)[0].running, true);
  assert.equal(c.title(F, 'B'), 'and B');
  // A title set on the server wins over the first prompt.
  c.setList(F, [{ id: 'B', title: 'renamed', turns: 1, live: true }]);
  assert.equal(c.title(F, 'B'), 'renamed');
});

test('an empty conversation is listed only while shown', () => {
  const c = new Conversations(() => 'proj');
  c.setList(F, [{ id: 'E', title: '', turns: 0, live: true }, { id: 'A', title: 'a', turns: 1, live: true }]);
  c.show(F, 'E');
  assert.deepEqual(c.entries(F).map((x) => x.id), ['E', 'A']);
  c.show(F, 'A');
  assert.deepEqual(c.entries(F).map((x) => x.id), ['A']);
  // A new one here, not listed by the server yet, with a prompt: listed.
  const n = c.route(F, 'N').transcript;
  n.prompt('hi');
  assert.deepEqual(c.entries(F).map((x) => x.id), ['N', 'A']);
});

test('a deleted conversation leaves the list and its transcript', () => {
  const c = new Conversations(() => 'proj');
  c.setList(F, [{ id: 'A', title: 'a', turns: 1, live: true }, { id: 'B', title: 'b', turns: 1, live: true }]);
  c.show(F, 'B');
  c.route(F, 'A');
  c.remove(F, 'B');
  assert.equal(c.find(F, 'B'), undefined);
  assert.deepEqual(c.entries(F).map((x) => x.id), ['A']);
  assert.equal(c.shownId(F), '');
});

test('relative times', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  assert.equal(relativeTime('2026-11-24T11:59:40Z', now), 'just now');
  assert.equal(relativeTime('2026-11-24T11:57:00Z', now), '3 min ago');
  assert.equal(relativeTime('2026-11-24T10:00:00Z', now), '2 h ago');
  assert.equal(relativeTime('2026-11-23T11:00:00Z', now), 'yesterday');
  assert.equal(relativeTime('2026-11-19T12:00:00Z', now), '5 days ago');
  assert.equal(relativeTime('2026-01-02T12:00:00Z', now), '2026-01-02');
  assert.equal(relativeTime(undefined, now), '');
  assert.equal(relativeTime('not a time', now), '');
});
