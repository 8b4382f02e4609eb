import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { checkpointLabel, diffStat, hunkLabel, ProposedChangesParams, reviewArgs } from '../reviewwire';

const proposal: ProposedChangesParams = {
  folder: '/w', turn: 1, id: '2.c1', callId: 'c1',
  changes: [{
    uri: 'file:///w/r.txt', path: 'r.txt', kind: 'edit', diff: '--- a/r.txt\n+++ b/r.txt\n@@ -1,2 +1,2 @@\n-b\n+B\n',
    hunks: [
      { id: '1', diff: '@@ -1,2 +1,2 @@\n a\n-b\n+B agent\n', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } } },
      { id: '2', diff: '@@ -8,2 +8,3 @@\n h\n-i\n+I\n+I2\n', range: { start: { line: 8, character: 0 }, end: { line: 9, character: 0 } } },
    ],
  }],
};

test('reviewArgs: all, none and a subset', () => {
  assert.deepEqual(reviewArgs(proposal, ['1', '2']), { uri: 'file:///w', id: '2.c1', accept: 'all', reject: [] });
  assert.deepEqual(reviewArgs(proposal, [], ' no '), { uri: 'file:///w', id: '2.c1', accept: [], reject: 'all', comment: 'no' });
  assert.deepEqual(reviewArgs(proposal, ['2', 'x'], 'keep b'), { uri: 'file:///w', id: '2.c1', accept: ['2'], reject: ['1'], comment: 'keep b' });
});

test('hunk labels count lines and name the line', () => {
  assert.deepEqual(diffStat(proposal.changes[0].hunks[1].diff), { added: 2, removed: 1 });
  assert.equal(hunkLabel('r.txt', proposal.changes[0].hunks[1]).label, 'hunk 2: r.txt:9 (+2 −1)');
  assert.equal(checkpointLabel({ turn: 3, prompt: 'fix it\nplease', commits: [], files: ['a.go'], compacted: true }).description, 'a.go (compacted: files only)');
});

import { toServerConfig } from '../settings';

test('loom.tools.edits goes to the server as tools.edits; other values are dropped', () => {
  assert.deepEqual(toServerConfig({ tools: { bash: 'ask', edits: 'review' } }), { tools: { bash: 'ask', edits: 'review' } });
  assert.deepEqual(toServerConfig({ tools: { edits: 'propose' } }), {});
  assert.deepEqual(toServerConfig({ tools: { edits: '' } }), {});
});
