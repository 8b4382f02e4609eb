import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Transcript } from '../transcript';

const F = '/w/proj';

test('a prompt typed during a turn is drawn after the running answer, never inside it', () => {
  const t = new Transcript(F, 'proj');
  const first = t.prompt('tell a story');
  t.asked(first, 1);
  t.setState('CallingLlm', 1);
  t.delta({ folder: F, turn: 1, seq: 1, text: 'Once upon ' });
  const second = t.prompt('and then?');
  assert.equal(second.queued, true);
  t.asked(second, 2);
  t.delta({ folder: F, turn: 1, seq: 2, text: 'a time.' });
  // One answer, whole, then the queued prompt.
  assert.deepEqual(t.items.map((i) => i.kind === 'assistant' ? `a:${i.text}` : `${i.kind}:${i.kind === 'user' ? i.text : ''}`),
    ['user:tell a story', 'a:Once upon a time.', 'user:and then?']);
  t.turnEnded(1, 'done');
  // Still queued while its turn has not started; the turn end goes before it.
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'assistant', 'turnEnd', 'user']);
  const moved = t.setState('CallingLlm', 2);
  assert.deepEqual(moved.map((i) => i.id), [second.id]);
  assert.equal(second.queued, false);
  t.delta({ folder: F, turn: 2, seq: 3, text: 'The end.' });
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'assistant', 'turnEnd', 'user', 'assistant']);
});

test('a queued prompt whose ask fails leaves the queue', () => {
  const t = new Transcript(F, 'proj');
  t.setState('CallingLlm', 1);
  const u = t.prompt('x');
  assert.equal(u.queued, true);
  t.failed(u);
  assert.equal(u.queued, false);
  assert.equal(t.items[t.items.length - 1], u);
});

test('a reload restores the conversation as drawn: diffs, commits, notices, stop marks, prompts as shown', () => {
  const t = new Transcript(F, 'proj');
  const p = t.prompt('Fix this problem', 'Problem: missing value');
  t.asked(p, 1);
  t.setState('ExecutingTools', 1);
  t.tool({ folder: F, turn: 1, id: 'e1', name: 'edit_file', summary: '{"path":"a.txt"}', view: { kind: 'edit', title: 'Edit a.txt', label: 'a.txt', path: 'a.txt', file: 'a.txt' }, status: 'succeeded', diff: '@@ -1 +1 @@\n-x\n+y\n' });
  t.commit(1, 'abc1234567', 'loom: edit a.txt');
  t.notice('warning', 'retrying in 2s');
  t.turnEnded(1, 'cancelled');
  const q = t.prompt('go on');
  t.asked(q, 2);
  t.setState('CallingLlm', 2);
  t.delta({ folder: F, turn: 2, seq: 1, text: 'Half a sen' });
  t.tool({ folder: F, turn: 2, id: 'b1', name: 'bash', summary: '{"command":"sleep 9"}', view: { kind: 'execute', title: 'Run `sleep 9`', label: '$ sleep 9' }, status: 'running' });
  const saved = JSON.parse(JSON.stringify(t.saved()));

  const history = {
    folder: F, messages: [
      { role: 'user', content: 'Fix this problem\n\nDiagnostic there: missing value' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'go on' },
    ],
  };
  const r = new Transcript(F, 'proj');
  assert.equal(r.restore(saved, history), true);
  const kinds = r.items.map((i) => i.kind);
  assert.deepEqual(kinds, ['user', 'tool', 'commit', 'notice', 'turnEnd', 'user', 'assistant', 'tool', 'turnEnd']);
  const user = r.items[0];
  assert.ok(user.kind === 'user' && user.text === 'Fix this problem' && user.context === 'Problem: missing value', 'the prompt as the user saw it');
  const edit = r.items[1];
  assert.ok(edit.kind === 'tool' && edit.diff?.includes('+y') && edit.path === 'a.txt');
  const commit = r.items[2];
  assert.ok(commit.kind === 'commit' && commit.sha === 'abc1234567');
  const cut = r.items[7];
  assert.ok(cut.kind === 'tool' && cut.status === 'cancelled', 'a card the reload cut is cancelled');
  const end = r.items[8];
  assert.ok(end.kind === 'turnEnd' && end.outcome === 'interrupted' && end.turn === 2);
  // New items do not reuse the ids restored.
  const n = r.notice('info', 'later');
  assert.ok(n && !saved.items.some((i: { id: string }) => i.id === n.id));
});

test('a restarted server\'s first notices never replace the record; the cut turn is marked once', () => {
  const t = new Transcript(F, 'proj');
  t.asked(t.prompt('write a note'), 1);
  t.setState('ExecutingTools', 1);
  t.commit(1, 'abc1234567', 'loom: edit note.txt');
  t.turnEnded(1, 'done');
  const story = t.prompt('tell a long story');
  t.asked(story, 2);
  t.setState('CallingLlm', 2);
  t.delta({ folder: F, turn: 2, seq: 1, text: 'Once upon' });
  const saved = JSON.parse(JSON.stringify(t.saved()));

  // After the reload: the restarted server closes the cut turn and says
  // it resumed, before loom.history is asked.
  const r = new Transcript(F, 'proj');
  r.notice('info', 'resumed the conversation: 4 messages, 2 turns');
  r.turnEnded(2, 'cancelled');
  assert.equal(r.loaded, false, 'not loaded: what it holds must not be kept as the record');
  const history = { folder: F, messages: [{ role: 'user', content: 'write a note' }, { role: 'user', content: 'tell a long story' }] };
  assert.equal(r.restore(saved, history), true);
  assert.equal(r.loaded, true);
  // The server's end of the cut turn may also come after the redraw.
  assert.deepEqual(r.turnEnded(2, 'cancelled'), []);
  assert.deepEqual(r.items.map((i) => i.kind === 'turnEnd' ? `end:${i.outcome}` : i.kind),
    ['user', 'commit', 'end:done', 'user', 'assistant', 'end:interrupted']);

  const h = new Transcript(F, 'proj');
  h.redraw(history);
  assert.equal(h.loaded, true, 'drawn from loom.history: loaded');
});

test('a turn the restarted server still runs (a review it took up again) is not marked as cut', () => {
  const t = new Transcript(F, 'proj');
  t.asked(t.prompt('write two notes'), 1);
  t.setState('ExecutingTools', 1);
  const saved = JSON.parse(JSON.stringify(t.saved()));
  const history = { folder: F, messages: [{ role: 'user', content: 'write two notes' }] };
  const r = new Transcript(F, 'proj');
  assert.equal(r.restore(saved, history, true), true);
  assert.deepEqual(r.items.map((i) => i.kind === 'turnEnd' ? `end:${i.outcome}` : i.kind), ['user']);
  const cut = new Transcript(F, 'proj');
  assert.equal(cut.restore(saved, history), true);
  assert.deepEqual(cut.items.map((i) => i.kind === 'turnEnd' ? `end:${i.outcome}` : i.kind), ['user', 'end:interrupted']);
});

test('a kept conversation that is no longer the server\'s is not restored', () => {
  const t = new Transcript(F, 'proj');
  t.asked(t.prompt('one'), 1);
  const saved = t.saved();
  const r = new Transcript(F, 'proj');
  assert.equal(r.restore(saved, { folder: F, messages: [] }), false, 'a new conversation');
  assert.equal(r.restore(saved, { folder: F, messages: [{ role: 'user', content: 'something else' }] }), false, 'another client went on');
  assert.equal(r.restore(undefined, { folder: F, messages: [{ role: 'user', content: 'one' }] }), false);
  assert.equal(r.items.length, 0);
});

test('undo of an older commit marks that commit, not the newest', () => {
  const t = new Transcript(F, 'proj');
  t.commit(1, 'aaa1111', 'first');
  t.commit(2, 'bbb2222', 'second');
  const c = t.undone('reverted aaa1111', 'aaa1111');
  assert.ok(c?.kind === 'commit' && c.sha === 'aaa1111');
  const newest = t.items[1];
  assert.ok(newest.kind === 'commit' && newest.undone === undefined);
});

test('a bash approval shows the whole command, lines kept, with the rules offered', () => {
  const t = new Transcript(F, 'proj');
  const script = 'set -e\n' + Array.from({ length: 8 }, (_, i) => `echo line${i}`).join('\n');
  t.tool({ folder: F, turn: 1, id: 'c1', name: 'bash', summary: JSON.stringify({ command: script }).slice(0, 200), status: 'pending',
    view: { kind: 'execute', title: 'Run `set -e …`', label: '$ ' + script } });
  const card = t.approval('ap', 'bash', script, 'every command', { exact: script, prefix: 'echo' });
  assert.equal(card.title, '$ ' + script);
  assert.equal(card.approval?.prefix, 'echo');
  t.answered('ap', true, 'always commands starting with `echo`');
  assert.equal(card.approval?.rule, 'always commands starting with `echo`');
});

test('a call id the model server reuses in a later turn gets a card of its own', () => {
  const t = new Transcript(F, 'proj');
  const st = (turn: number, status: string, extra = {}) =>
    t.tool({ folder: F, turn, id: 'call_1', name: 'bash', summary: '', status, ...extra });
  st(1, 'pending', { summary: '{"command":"echo one"}', view: { kind: 'execute', title: 'Run `echo one`', label: '$ echo one' } });
  st(1, 'succeeded', { progress: 'exit 0' });
  t.turnEnded(1, 'done');
  st(2, 'pending', { summary: '{"command":"npm test"}', view: { kind: 'execute', title: 'Run `npm test`', label: '$ npm test' } });
  const card = t.approval('a', 'bash', 'npm test');
  t.answered('a', true);
  st(2, 'succeeded', { progress: 'exit 0' });
  t.turnEnded(2, 'done');
  const cards = t.items.filter((i) => i.kind === 'tool');
  assert.equal(cards.length, 2);
  assert.ok(cards[0].kind === 'tool' && cards[0].title === '$ echo one' && cards[0].approval === undefined);
  assert.ok(card.status === 'succeeded' && card.title === '$ npm test', `the second call's card: ${card.status}`);
  t.toolResults({ folder: F, messages: [
    { role: 'tool', content: 'one', toolCallId: 'call_1' }, { role: 'tool', content: 'tests pass', toolCallId: 'call_1' }] });
  assert.ok(cards[0].kind === 'tool' && cards[0].output === 'one' && card.output === 'tests pass');
});

test('a reload after a command changed a file the model had read restores the record (loom\'s note after the prompt is no prompt)', () => {
  const t = new Transcript(F, 'proj');
  t.asked(t.prompt('run the formatter'), 1);
  t.setState('ExecutingTools', 1);
  t.tool({ folder: F, turn: 1, id: 'f1', name: 'bash', summary: '{"command":"fmt"}', view: { kind: 'execute', title: 'Run `fmt`', label: '$ fmt' }, status: 'succeeded' });
  t.turnEnded(1, 'done');
  const saved = JSON.parse(JSON.stringify(t.saved()));
  const history = {
    folder: F, messages: [
      { role: 'user', content: 'run the formatter' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'f1', name: 'bash', arguments: '{"command": "fmt"}', view: { kind: 'execute', title: 'Run `fmt`', label: '$ fmt' } }] },
      { role: 'tool', content: 'done', toolCallId: 'f1' },
      { role: 'user', content: '[loom] changed on disk since you read them: a.txt (read them again before editing them)', note: true },
      { role: 'assistant', content: 'Formatted.' },
    ],
  };
  const r = new Transcript(F, 'proj');
  assert.equal(r.restore(saved, history), true, 'the record kept, not a poorer redraw');
});
