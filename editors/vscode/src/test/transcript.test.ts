import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Transcript } from '../transcript';
import type { ToolCallParams } from '../protocol';

const F = '/w/proj';
const tool = (id: string, status: string, extra: Partial<ToolCallParams> = {}): ToolCallParams => ({
  folder: F, turn: 1, id, name: 'bash', summary: '{"command":"npm test"}', status, view: { kind: 'execute', title: 'Run `npm test`', label: '$ npm test' }, ...extra,
});

test('deltas of a turn stream into one assistant item; a tool call starts a new one', () => {
  const t = new Transcript(F, 'proj');
  t.prompt('hi');
  t.setState('CallingLlm', 1);
  t.delta({ folder: F, turn: 1, seq: 1, text: 'Hel' });
  t.delta({ folder: F, turn: 1, seq: 2, text: 'lo' });
  t.tool(tool('c1', 'running'));
  t.setState('ExecutingTools', 1);
  assert.equal(t.header().state, 'running bash');
  t.delta({ folder: F, turn: 1, seq: 3, text: 'Done.' });
  const kinds = t.items.map((i) => i.kind);
  assert.deepEqual(kinds, ['user', 'assistant', 'tool', 'assistant']);
  const texts = t.items.filter((i) => i.kind === 'assistant').map((i) => (i as { text: string }).text);
  assert.deepEqual(texts, ['Hello', 'Done.']);
  assert.equal(t.header().busy, true);
});

test('thinking (kind thought) goes to a thought item of its own, never into the answer; seq is shared', () => {
  const t = new Transcript(F, 'proj');
  t.prompt('hi');
  t.delta({ folder: F, turn: 1, seq: 1, text: 'Let me ', kind: 'thought' });
  t.delta({ folder: F, turn: 1, seq: 2, text: 'think.', kind: 'thought' });
  const r = t.delta({ folder: F, turn: 1, seq: 3, text: 'Answer.' });
  assert.equal(r.gap, false);
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'thought', 'assistant']);
  assert.equal((t.items[1] as { text: string }).text, 'Let me think.');
  assert.equal((t.items[2] as { text: string }).text, 'Answer.');
});

test('replace drops the partial answer a retry replaces; text before a tool call stays', () => {
  const t = new Transcript(F, 'proj');
  t.prompt('hi');
  t.delta({ folder: F, turn: 1, seq: 1, text: 'Reading.' });
  t.tool(tool('c1', 'succeeded'));
  t.delta({ folder: F, turn: 1, seq: 2, text: "I'll read a.txt and" });
  t.delta({ folder: F, turn: 1, seq: 3, text: '', replace: true });
  t.delta({ folder: F, turn: 1, seq: 4, text: "I'll read a.txt and list the files." });
  const texts = t.items.filter((i) => i.kind === 'assistant').map((i) => (i as { text: string }).text);
  assert.deepEqual(texts, ['Reading.', "I'll read a.txt and list the files."]);
});

test('a duplicate delta is dropped, a gap is reported once', () => {
  const t = new Transcript(F, 'proj');
  t.delta({ folder: F, turn: 1, seq: 1, text: 'a' });
  t.delta({ folder: F, turn: 1, seq: 2, text: 'b' });
  assert.deepEqual(t.delta({ folder: F, turn: 1, seq: 2, text: 'b' }).changed, []);
  assert.equal(t.delta({ folder: F, turn: 1, seq: 4, text: 'd' }).gap, true);
  assert.equal(t.takeGap(), true);
  assert.equal(t.takeGap(), false);
});

test('a tool card keeps its title, status, output and diff; an edit card gets the path', () => {
  const t = new Transcript(F, 'proj');
  t.tool(tool('c1', 'pending'));
  t.tool(tool('c1', 'running', { summary: '', view: undefined, progress: 'running' }));
  t.tool(tool('c1', 'running', { summary: '', view: undefined, progress: 'ok 1' }));
  const [card] = t.tool(tool('c1', 'succeeded', { summary: '', view: undefined, progress: 'ok 1\nok 2' }));
  assert.equal(card.kind, 'tool');
  if (card.kind !== 'tool') return;
  assert.equal(card.title, '$ npm test');
  assert.equal(card.status, 'succeeded');
  assert.equal(card.output, 'ok 1', 'the last status\'s line is a summary, not the output');
  assert.equal(card.summary, 'ok 1\nok 2');
  const filled = t.toolResults({ folder: F, messages: [{ role: 'tool', content: 'ok 1\nok 2\nall passed', toolCallId: 'c1' }] });
  assert.deepEqual(filled.map((i) => i.id), ['t1-c1']);
  assert.equal(card.output, 'ok 1\nok 2\nall passed');
  const [edit] = t.tool({ folder: F, turn: 1, id: 'c2', name: 'edit_file', summary: '{"path":"a.txt","old_string":"x","new_string":"y"}', view: { kind: 'edit', title: 'Edit a.txt', label: 'a.txt', path: 'a.txt', file: 'a.txt' }, status: 'succeeded', diff: '@@ -1 +1 @@\n-x\n+y\n' });
  assert.ok(edit.kind === 'tool' && edit.path === 'a.txt' && edit.diff?.includes('+y'));
  assert.equal(t.items.filter((i) => i.kind === 'tool').length, 2);
});

test('an approval attaches to the open call, and an early one is adopted by the call', () => {
  const t = new Transcript(F, 'proj');
  t.tool(tool('c1', 'pending'));
  t.tool(tool('c1', 'running', { summary: '', view: undefined }));
  const card = t.approval('ap1', 'bash', 'npm test');
  assert.equal(card.callId, 'c1');
  assert.equal(card.title, '$ npm test');
  t.tool(tool('c1', 'running', { summary: '', view: undefined, progress: 'still asking' }));
  assert.equal(card.approval?.state, 'ask', 'running is not an answer');
  assert.equal(t.header().state, 'waiting for approval');
  assert.equal(t.answered('ap1', true)?.approval?.state, 'allowed');
  assert.notEqual(t.header().state, 'waiting for approval');

  // An approval card whose call never reported, ended with its turn,
  // is not adopted by a later call.
  const stale = t.approval('ap0', 'bash', 'old command');
  t.turnEnded(1, 'done');
  assert.equal(stale.status, 'cancelled');
  const early = t.approval('ap2', 'bash', 'rm -rf x');
  assert.equal(early.callId, '');
  const [adopted] = t.tool(tool('c9', 'pending', { summary: '{"command":"rm -rf x"}', view: { kind: 'execute', title: 'Run `rm -rf x`', label: '$ rm -rf x' } }));
  assert.equal(adopted.id, early.id, 'one card, not two');
  assert.equal(t.items.filter((i) => i.kind === 'tool').length, 3);
});

test('a queued prompt stops being queued when its turn starts', () => {
  const t = new Transcript(F, 'proj');
  t.setState('CallingLlm', 1);
  const u = t.prompt('second');
  assert.equal(u.queued, true);
  t.asked(u, 2);
  assert.equal(u.queued, true);
  const changed = t.setState('CallingLlm', 2);
  assert.deepEqual(changed.map((i) => i.id), [u.id]);
  assert.equal(u.queued, false);
});

test('a cancelled turn ends its open cards as cancelled, once, with usage in the header', () => {
  const t = new Transcript(F, 'proj');
  t.tool(tool('c1', 'running'));
  const changed = t.turnEnded(1, 'cancelled', { prompt: 10, completion: 5, total: 15 });
  const card = t.items.find((i) => i.kind === 'tool');
  assert.ok(card?.kind === 'tool' && card.status === 'cancelled');
  assert.equal(changed[changed.length - 1].kind, 'turnEnd');
  assert.deepEqual(t.header().usage, { prompt: 10, completion: 5, total: 15 });
  assert.ok(t.notice('error', 'boom'));
  assert.equal(t.notice('error', 'boom'), undefined, 'a repeated notice is shown once');
});

test('redraw rebuilds prompts, answers and tool cards with their results from loom.history', () => {
  const t = new Transcript(F, 'proj');
  t.prompt('old');
  t.redraw({
    folder: F, messages: [
      { role: 'user', content: 'run the tests' },
      { role: 'assistant', content: 'Running them.', toolCalls: [{ id: 'x1', name: 'bash', arguments: '{"command": "go test ./..."}', view: { kind: 'execute', title: 'Run `go test ./...`', label: '$ go test ./...' } }] },
      { role: 'tool', content: 'ok  pkg', toolCallId: 'x1' },
      { role: 'assistant', content: 'All **green**.' },
    ],
  });
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'assistant', 'tool', 'assistant']);
  const card = t.items[2];
  assert.ok(card.kind === 'tool' && card.title === '$ go test ./...' && card.output === 'ok  pkg' && card.status === 'succeeded');
});

test('redraw leaves out loom\'s own notes to the model: they are no prompts and no turns', () => {
  const t = new Transcript(F, 'proj');
  t.redraw({
    folder: F, messages: [
      { role: 'user', content: 'run the formatter' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'f1', name: 'bash', arguments: '{"command": "fmt"}', view: { kind: 'execute', title: 'Run `fmt`', label: '$ fmt' } }] },
      { role: 'tool', content: 'done', toolCallId: 'f1' },
      { role: 'user', content: '[loom] changed on disk since you read them: a.txt (read them again before editing them)', note: true },
      { role: 'assistant', content: 'Formatted.' },
      { role: 'user', content: 'frame a.txt' },
    ],
  });
  const users = t.items.filter((i) => i.kind === 'user');
  assert.deepEqual(users.map((u) => u.kind === 'user' && [u.text, u.turn]), [['run the formatter', 1], ['frame a.txt', 2]]);
});

test('redraw marks denied and cancelled calls as the live cards did', () => {
  const t = new Transcript(F, 'proj');
  t.redraw({
    folder: F, messages: [
      { role: 'user', content: 'clean up' },
      { role: 'assistant', content: '', toolCalls: [
        { id: 'd1', name: 'bash', arguments: '{"command": "rm -rf build"}', view: { kind: 'execute', title: 'Run `rm -rf build`', label: '$ rm -rf build' } },
        { id: 'c1', name: 'bash', arguments: '{"command": "sleep 100"}', view: { kind: 'execute', title: 'Run `sleep 100`', label: '$ sleep 100' } },
      ] },
      { role: 'tool', content: 'tool error: denied by the user; the command was not run', toolCallId: 'd1' },
      { role: 'tool', content: 'tool error: cancelled by the user before this call finished', toolCallId: 'c1' },
    ],
  });
  const [denied, cancelled] = t.items.filter((i) => i.kind === 'tool');
  assert.ok(denied.kind === 'tool' && denied.status === 'failed' && denied.approval?.state === 'denied');
  assert.ok(cancelled.kind === 'tool' && cancelled.status === 'cancelled' && cancelled.approval === undefined);
});

test('commits and their undo', () => {
  const t = new Transcript(F, 'proj');
  t.commit(1, 'abcdef1234', 'loom: edit a.txt');
  const c = t.undone('reverted abcdef1');
  assert.ok(c?.kind === 'commit' && c.undone === 'reverted abcdef1');
  assert.equal(t.undone('again'), undefined);
});

test("loom's own notes to the model (note: true) redraw as notices, not prompts, and start no turn; a reload record still restores after one", () => {
  const t = new Transcript(F, 'proj');
  t.redraw({
    folder: F, messages: [
      { role: 'user', content: 'frame hello.txt' },
      { role: 'assistant', content: 'Framed.' },
      { role: 'user', content: '[loom] changed on disk since you read them: lens.txt (read them again before editing them)', note: true },
      { role: 'user', content: 'say ok' },
      { role: 'assistant', content: 'ok' },
    ],
  });
  assert.deepEqual(t.items.map((i) => i.kind), ['user', 'assistant', 'notice', 'user', 'assistant']);
  const n = t.items[2];
  assert.ok(n.kind === 'notice' && n.text.startsWith('changed on disk since you read them: lens.txt'));
  const turns = t.items.filter((i) => i.kind === 'user').map((i) => i.kind === 'user' ? i.turn : 0);
  assert.deepEqual(turns, [1, 2], 'the note is no turn of its own');

  const live = new Transcript(F, 'proj');
  const p = live.prompt('say ok');
  live.asked(p, 1);
  const saved = JSON.parse(JSON.stringify(live.saved()));
  const r = new Transcript(F, 'proj');
  assert.equal(r.restore(saved, {
    folder: F, messages: [
      { role: 'user', content: 'say ok' },
      { role: 'user', content: '[loom] changed on disk since you read them: a.txt (read them again before editing them)', note: true },
    ],
  }), true, 'the last prompt is the last message that is no note');
});

test('a prompt typed while loom-lsp starts stays queued through the redraw and the restore, then goes in (issue 47 item 1)', () => {
  const t = new Transcript(F, 'proj');
  t.prompt('earlier');
  const early = t.prompt('Say ok', undefined, undefined, true);
  assert.equal(early.queued, true, 'waits, drawn as queued');
  t.redraw({ folder: F, messages: [{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'ok' }] });
  assert.deepEqual(t.items.map((i) => i.kind === 'user' ? `${i.text}${i.queued ? ' (queued)' : ''}` : i.kind), ['earlier', 'assistant', 'Say ok (queued)']);
  assert.equal(t.get(early.id), early, 'the same item, still known');
  t.restore({ version: 1, turn: 1, items: [{ kind: 'user', id: 'u1', text: 'earlier', turn: 1 }] } as never,
    { folder: F, messages: [{ role: 'user', content: 'earlier' }] });
  assert.equal(t.get(early.id), early, 'kept by the restore too');
  const moved = t.asked(early, 2);
  assert.deepEqual(moved.map((i) => i.id), [early.id]);
  assert.equal(early.queued, false);
  assert.equal(t.items[t.items.length - 1], early, 'into the conversation once the server took it');
  // A prompt the server took (it has a turn) is the server's: a redraw draws what the server says.
  t.redraw({ folder: F, messages: [] });
  assert.equal(t.get(early.id), undefined);
});
