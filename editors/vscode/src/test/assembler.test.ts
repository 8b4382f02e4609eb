import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { DeltaAssembler } from '../assembler';

const d = (folder: string, turn: number, seq: number, text: string) => ({ folder, turn, seq, text });

test('in-order deltas assemble per folder and turn', () => {
  const a = new DeltaAssembler();
  assert.deepEqual(a.push(d('/a', 1, 1, 'Hel')), { kind: 'show' });
  assert.deepEqual(a.push(d('/a', 1, 2, 'lo')), { kind: 'show' });
  assert.deepEqual(a.push(d('/b', 4, 1, 'other')), { kind: 'show' });
  assert.deepEqual(a.push(d('/a', 2, 3, 'next turn')), { kind: 'show' });
  assert.equal(a.text('/a', 1), 'Hello');
  assert.equal(a.text('/a', 2), 'next turn');
  assert.equal(a.text('/b', 4), 'other');
  assert.equal(a.takeGap('/a'), false);
});

test('a jump in seq is a gap, reported once', () => {
  const a = new DeltaAssembler();
  a.push(d('/a', 1, 1, 'x'));
  assert.deepEqual(a.push(d('/a', 1, 4, 'y')), { kind: 'gap', missing: 2 });
  assert.equal(a.text('/a', 1), 'xy');
  assert.equal(a.takeGap('/b'), false);
  assert.equal(a.takeGap('/a'), true);
  assert.equal(a.takeGap('/a'), false);
});

test('duplicates and reordered deltas are dropped', () => {
  const a = new DeltaAssembler();
  a.push(d('/a', 1, 1, 'x'));
  a.push(d('/a', 1, 2, 'y'));
  assert.deepEqual(a.push(d('/a', 1, 2, 'y')), { kind: 'stale' });
  assert.deepEqual(a.push(d('/a', 1, 0, 'z')), { kind: 'stale' });
  assert.equal(a.text('/a', 1), 'xy');
});

test('joining mid-stream is not a gap; seq 1 again is a restart', () => {
  const a = new DeltaAssembler();
  assert.deepEqual(a.push(d('/a', 3, 17, 'late')), { kind: 'show' });
  assert.equal(a.takeGap('/a'), false);
  assert.deepEqual(a.push(d('/a', 1, 1, 'again')), { kind: 'restart' });
  assert.deepEqual(a.push(d('/a', 1, 2, '!')), { kind: 'show' });
  a.clearTexts('/a');
  assert.equal(a.text('/a', 1), '');
});
