import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { matchCheckpoint, redoSaid, rewindSaid } from '../restore';
import type { Checkpoint } from '../reviewwire';

const cp = (turn: number, prompt: string, compacted = false): Checkpoint => ({ turn, prompt, commits: [], files: [], compacted });

test('a prompt finds its checkpoint by its turn', () => {
  const cps = [cp(1, 'one'), cp(2, 'two'), cp(3, 'three')];
  assert.equal(matchCheckpoint(cps, [{ text: 'one', turn: 1 }, { text: 'two', turn: 2 }, { text: 'three', turn: 3 }], 1)?.turn, 2);
});

test('after a rewind the server numbers turns on: a redrawn prompt is matched from the end', () => {
  // Turn 2 was rewound and a new prompt ran as turn 4; loom.history numbers them 1, 2.
  const cps = [cp(1, 'one'), cp(4, 'two again')];
  const users = [{ text: 'one', turn: 1 }, { text: 'two again', turn: 2 }];
  assert.equal(matchCheckpoint(cps, users, 1)?.turn, 4);
  assert.equal(matchCheckpoint(cps, users, 0)?.turn, 1);
});

test('compacted turns are skipped, and a prompt that is no checkpoint matches none', () => {
  const cps = [cp(1, 'old', true), cp(2, 'old too', true), cp(3, 'kept')];
  assert.equal(matchCheckpoint(cps, [{ text: 'kept', turn: 1 }], 0)?.turn, 3);
  assert.equal(matchCheckpoint(cps, [{ text: 'something else', turn: 1 }], 0), undefined);
  assert.equal(matchCheckpoint(cps, [], 0), undefined);
  // The server may add the selection after the prompt.
  assert.equal(matchCheckpoint([cp(5, 'fix this\n\nselection: a.go:1-3')], [{ text: 'fix this', turn: 5 }], 0)?.turn, 5);
});

test('the words said after a rewind name restored, kept and conflicting files', () => {
  const said = rewindSaid(2, 'both', { restored: ['a.txt', 'b.txt'], kept: ['a.txt'], conflicts: ['c.txt'], commit: 'abcdef1234', prompt: 'two' });
  assert.match(said, /^Restored the files and the conversation to before turn 2\./);
  assert.match(said, /Files restored: a\.txt, b\.txt \(commit abcdef1\)\./);
  assert.match(said, /Your own edits were kept in a\.txt\./);
  assert.match(said, /Left as they are: c\.txt \(your edits overlap the agent's\)\./);
  assert.match(rewindSaid(1, 'files', { restored: [], kept: [], conflicts: ['c.txt'], notes: ['c.txt has unsaved changes in the editor'] }),
    /Left as they are: c\.txt: c\.txt has unsaved changes in the editor\./);
  assert.match(said, /Your prompt is back in the input/);
  assert.doesNotMatch(rewindSaid(2, 'conversation', { restored: [], kept: [], conflicts: [], prompt: 'two' }), /file/i);
  assert.match(rewindSaid(1, 'files', { restored: [], kept: [], conflicts: [] }), /No file to restore/);
  assert.equal(redoSaid({ restored: ['a.txt'], kept: [], conflicts: [] }), "Redone: the rewind is undone. The agent's changes are back in a.txt.");
});
