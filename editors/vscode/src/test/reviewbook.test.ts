import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { headerLines, hunkIds, proposedText, ReviewBook, splitLines, textBefore } from '../reviewbook';
import type { ProposedChangesParams, ProposedHunk } from '../reviewwire';

// Hunks as loom-lsp's review.Split makes them (workspace/review), for
// hello.txt framed by a header and a footer.
const hello = 'Hello, world!\nA second line.\n';
const frame: ProposedHunk[] = [
  { id: '1', diff: '@@ -1,2 +1,3 @@\n+# greeting\n Hello, world!\n A second line.\n', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } },
  { id: '2', diff: '@@ -1,2 +1,3 @@\n Hello, world!\n A second line.\n+# end\n', range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } } },
];
// A replacement, and one running to a last line without a line end.
const letters = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj';
const lettersHunks: ProposedHunk[] = [
  { id: '1', diff: '@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } },
  { id: '2', diff: '@@ -6,5 +6,5 @@\n f\n g\n h\n-i\n-j\n\\ No newline at end of file\n+I\n+J\n\\ No newline at end of file\n', range: { start: { line: 8, character: 0 }, end: { line: 9, character: 0 } } },
];

function proposal(id = '3.c1', folder = '/w'): ProposedChangesParams {
  return {
    folder, turn: 3, id, callId: 'c1',
    changes: [
      { uri: 'file:///w/hello.txt', path: 'hello.txt', kind: 'edit', diff: '', hunks: frame },
      { uri: 'file:///w/l.txt', path: 'l.txt', kind: 'edit', diff: '', hunks: [{ ...lettersHunks[0], id: '3' }] },
    ],
  };
}

test('a decision is sent only once every hunk is decided, as one loom.review', () => {
  const b = new ReviewBook();
  b.add(proposal());
  assert.deepEqual(hunkIds(proposal()), ['1', '2', '3']);
  assert.equal(b.decide('3.c1', ['1'], 'accept'), true);
  assert.equal(b.decide('3.c1', ['1'], 'accept'), false, 'no change');
  assert.equal(b.decide('3.c1', ['2', 'nope'], 'reject'), true);
  assert.equal(b.complete('3.c1'), false);
  assert.deepEqual(b.undecided('3.c1'), ['3']);
  const early = b.send('3.c1', 'file:///w');
  assert.deepEqual(early, { error: 'decide every hunk first (hunk 3 left)' });
  assert.equal(b.get('3.c1')!.state, 'open', 'a refused send changes nothing');
  b.decide('3.c1', ['3'], 'accept');
  b.setComment('3.c1', ' no footer please ');
  assert.equal(b.complete('3.c1'), true);
  const sent = b.send('3.c1', 'file:///w');
  assert.deepEqual(sent, { args: { uri: 'file:///w', id: '3.c1', accept: ['1', '3'], reject: ['2'], comment: 'no footer please' } });
  assert.equal(b.get('3.c1')!.state, 'sending');
  assert.deepEqual(b.send('3.c1', 'file:///w'), { error: 'the decision is already on its way' });
  assert.equal(b.decide('3.c1', ['2'], 'accept'), false, 'no decision changes once sent');
  b.settled('3.c1', { applied: ['1', '3'], rejected: ['2'], conflicts: [] });
  const card = b.card('3.c1')!;
  assert.equal(card.state, 'decided');
  assert.deepEqual(card.applied, ['1', '3']);
  assert.deepEqual(card.rejected, ['2']);
  assert.equal(card.comment, ' no footer please ');
});

test('accept all / reject all, undeciding, and the conversation goes along', () => {
  const b = new ReviewBook();
  b.add({ ...proposal('4.c2'), conversation: 'loom-abc' });
  b.decide('4.c2', 'all', 'accept');
  assert.equal(b.complete('4.c2'), true);
  b.decide('4.c2', ['2'], undefined);
  assert.deepEqual(b.undecided('4.c2'), ['2']);
  assert.deepEqual(b.send('4.c2', 'file:///w', 'reject'), { args: { uri: 'file:///w', id: '4.c2', conversation: 'loom-abc', accept: [], reject: 'all' } });
  const b2 = new ReviewBook();
  b2.add(proposal('5.c1'));
  assert.deepEqual(b2.send('5.c1', 'file:///w', 'accept'), { args: { uri: 'file:///w', id: '5.c1', accept: 'all', reject: [] } });
});

test('a failed send opens the proposal again with its decisions; a proposal the server forgot closes', () => {
  const b = new ReviewBook();
  b.add(proposal('6.c1'));
  b.send('6.c1', 'file:///w', 'accept');
  b.failed('6.c1', 'loom.review: timeout', false);
  assert.equal(b.get('6.c1')!.state, 'open');
  assert.equal(b.complete('6.c1'), true, 'decisions kept for the retry');
  assert.equal(b.card('6.c1')!.error, 'loom.review: timeout');
  b.send('6.c1', 'file:///w');
  b.settled('6.c1', { applied: ['1', '2', '3'], rejected: [] });
  assert.equal(b.card('6.c1')!.error, undefined, 'a decision that went through says no old error');
  b.get('6.c1')!.state = 'sending';
  b.failed('6.c1', 'no such proposal', true);
  assert.equal(b.get('6.c1')!.state, 'failed');
  assert.deepEqual(b.send('6.c1', 'file:///w'), { error: 'this change was already decided' });
});

test('the end of a turn closes its folder\'s open proposals only', () => {
  const b = new ReviewBook();
  b.add(proposal('7.c1', '/w'));
  b.add(proposal('7.c2', '/other'));
  b.add(proposal('8.c1', '/w'));
  b.send('8.c1', 'file:///w', 'accept');
  b.settled('8.c1', { applied: ['1', '2', '3'], rejected: [] });
  assert.deepEqual(b.closeOpen('/w').map((p) => p.params.id), ['7.c1']);
  assert.equal(b.get('7.c2')!.state, 'open');
  assert.equal(b.get('8.c1')!.state, 'decided');
  assert.deepEqual(b.open().map((p) => p.params.id), ['7.c2']);
  assert.equal(b.decide('7.c1', 'all', 'accept'), false, 'a closed proposal takes no decision');
});

test('a repeated proposal keeps the decisions made', () => {
  const b = new ReviewBook();
  b.add(proposal('9.c1'));
  b.decide('9.c1', ['1'], 'reject');
  b.add(proposal('9.c1'));
  assert.equal(b.get('9.c1')!.decisions.get('1'), 'reject');
});

test('the card: 1-based lines, +/- counts, decisions', () => {
  const b = new ReviewBook();
  b.add(proposal('10.c1'));
  b.decide('10.c1', ['2'], 'accept');
  const c = b.card('10.c1')!;
  assert.equal(c.state, 'open');
  assert.deepEqual(c.files.map((f) => f.path), ['hello.txt', 'l.txt']);
  assert.deepEqual(c.files[0].hunks.map((h) => [h.id, h.line, h.added, h.removed, h.decision]), [['1', 1, 1, 0, undefined], ['2', 3, 1, 0, 'accept']]);
  assert.deepEqual(c.files[1].hunks.map((h) => [h.line, h.added, h.removed]), [[2, 1, 1]]);
});

test('proposedText applies every hunk and says where each lands', () => {
  const p = proposedText(hello, frame)!;
  assert.equal(p.text, '# greeting\nHello, world!\nA second line.\n# end\n');
  assert.deepEqual([...p.anchors], [['1', 0], ['2', 3]]);
  const l = proposedText(letters, lettersHunks)!;
  assert.equal(l.text, 'a\nB\nc\nd\ne\nf\ng\nh\nI\nJ');
  assert.deepEqual([...l.anchors], [['1', 1], ['2', 8]]);
  const crlf = proposedText('a\r\nb\r\n', [{ id: '1', diff: '@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } }])!;
  assert.equal(crlf.text, 'a\r\nB\r\n');
});

test('textBefore: a command\'s changes (on disk) taken back, and where each hunk is now', () => {
  const framed = '# greeting\nHello, world!\nA second line.\n# end\n';
  const b = textBefore(framed, frame)!;
  assert.equal(b.text, hello);
  assert.deepEqual([...b.anchors], [['1', 0], ['2', 3]]);
  const l = textBefore('a\nB\nc\nd\ne\nf\ng\nh\nI\nJ', lettersHunks)!;
  assert.equal(l.text, letters);
  assert.deepEqual([...l.anchors], [['1', 1], ['2', 8]]);
  // The user typed over a line the command wrote: no before text.
  assert.equal(textBefore('a\nB!\nc\nd\ne\nf\ng\nh\nI\nJ', lettersHunks), undefined);
  // Round trip: the proposed text of the text before is the text now.
  assert.equal(proposedText(b.text, frame)!.text, framed);
});

test('a command\'s proposal: its card carries the command', () => {
  const b = new ReviewBook();
  b.add({ ...proposal('11.c1'), command: 'npm run fmt' });
  assert.equal(b.card('11.c1')!.command, 'npm run fmt');
  b.add(proposal('12.c1'));
  assert.equal('command' in b.card('12.c1')!, false);
});

test('proposedText refuses a file that changed since the proposal', () => {
  assert.equal(proposedText('a\nX\nc\nd\ne\nf\ng\nh\ni\nj', lettersHunks), undefined);
  assert.equal(proposedText('a\n', lettersHunks), undefined);
});

test('splitLines and headerLines', () => {
  assert.deepEqual(splitLines('a\nb'), ['a\n', 'b']);
  assert.deepEqual(splitLines('a\n'), ['a\n']);
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(headerLines('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n'), [2, 5]);
});

import { Transcript } from '../transcript';

test('the header says "waiting for your review" while a card\'s proposal is open, and the toggle\'s value', () => {
  const t = new Transcript('/w', 'w');
  const b = new ReviewBook();
  t.prompt('frame it');
  t.setState('ExecutingTools', 3);
  const [card] = t.tool({ folder: '/w', turn: 3, id: 'c1', name: 'write_file', summary: '{"path":"hello.txt"}', status: 'running' });
  assert.equal(t.header().state, 'running write_file');
  b.add(proposal('3.c1'));
  assert.equal(card.kind, 'tool');
  if (card.kind === 'tool') {
    card.review = b.card('3.c1');
  }
  assert.equal(t.header().state, 'waiting for your review');
  b.send('3.c1', 'file:///w', 'accept');
  if (card.kind === 'tool') {
    card.review = b.card('3.c1');
  }
  assert.equal(t.header().state, 'running write_file');
  assert.equal(t.header().reviewEdits, false);
  t.reviewEdits = true;
  assert.equal(t.header().reviewEdits, true);
});

test("a turn's end closes only its own conversation's open proposals", () => {
  const b = new ReviewBook();
  b.add({ ...proposal('1.c1'), conversation: 'A' });
  b.add({ ...proposal('2.c1'), conversation: 'B' });
  assert.deepEqual(b.closeOpen('/w', 'A').map((p) => p.params.id), ['1.c1']);
  assert.equal(b.get('2.c1')?.state, 'open');
  // An older loom-lsp names no conversation: the folder's proposals.
  assert.deepEqual(b.closeOpen('/w').map((p) => p.params.id), ['2.c1']);
});

test('the decisions so far and the comment go to the server as a draft, and come back with the proposal after a reload', () => {
  const b = new ReviewBook();
  b.add(proposal());
  b.decide('3.c1', ['1'], 'accept');
  b.decide('3.c1', ['3'], 'reject');
  b.setComment('3.c1', 'not l.txt');
  const draft = b.draft('3.c1');
  assert.deepEqual(draft, { accepted: ['1'], rejected: ['3'], comment: 'not l.txt' });
  // A new window: the server's loom.proposals carries the draft.
  const again = new ReviewBook();
  const p = again.add({ ...proposal(), draft: { ...draft, accepted: ['1', 'gone'] } });
  assert.deepEqual([...p.decisions], [['1', 'accept'], ['3', 'reject']], 'unknown hunks are dropped');
  assert.equal(p.comment, 'not l.txt');
  assert.deepEqual(again.undecided('3.c1'), ['2']);
  assert.equal(again.card('3.c1')?.comment, 'not l.txt');
});

test('the files of one response are siblings: each card counts the others still waiting, a command never joins them', () => {
  const b = new ReviewBook();
  const one = (id: string, turn = 3, extra: Partial<ProposedChangesParams> = {}): ProposedChangesParams => ({ ...proposal(id), turn, ...extra });
  b.add(one('3.a'));
  assert.equal(b.card('3.a')?.others, undefined, 'alone: no "all N files"');
  b.add(one('3.b'));
  b.add(one('3.c', 4));
  b.add(one('3.d', 3, { command: 'make' }));
  b.add(one('3.e', 3, { folder: '/other' }));
  assert.equal(b.card('3.a')?.others, 1);
  assert.deepEqual(b.siblings('3.b').map((p) => p.params.id), ['3.a']);
  assert.deepEqual(b.siblings('3.d'), [], "a command's changes are decided on their own");
  b.decide('3.b', 'all', 'accept');
  assert.ok(!('error' in b.send('3.b', 'file:///w')));
  assert.equal(b.card('3.a')?.others, undefined, 'the other file is decided: alone again');
});
