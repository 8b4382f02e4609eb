// The review and rewind wire shapes (loom/proposedChanges, loom.review,
// loom.checkpoints, loom.rewind, loom.redo, loom/rewound) and the pure
// helpers the review UI uses. No vscode imports: tested under node.

import type { ToolView } from './wire.gen';

export const ReviewMethods = {
  proposedChanges: 'loom/proposedChanges',
  rewound: 'loom/rewound',
} as const;

export interface ProposedHunk {
  id: string;
  diff: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}
export interface ProposedChange { uri: string; path: string; kind: string; diff: string; hunks: ProposedHunk[] }
export interface ProposedChangesParams {
  folder: string;
  /** The conversation it belongs to (absent: the folder's most recent). */
  conversation?: string;
  turn: number; id: string; callId: string; changes: ProposedChange[];
  /** A command's changes (kind command, already on disk): its command line. Accept keeps, reject discards. */
  command?: string;
  /** What the user decided so far and the comment typed (loom.reviewDraft), as loom.proposals gives it back. */
  draft?: ReviewDraft;
  /** The words of the call that proposes, for its tool card. */
  view?: ToolView;
}
/** loom.reviewDraft's arguments (besides uri, conversation and id), and loom.proposals' draft. */
export interface ReviewDraft { accepted?: string[]; rejected?: string[]; comment?: string }
export interface ReviewResult { applied: string[]; rejected: string[]; conflicts?: string[] }
export interface Checkpoint { turn: number; prompt: string; time?: string; commits: string[]; files: string[]; compacted?: boolean }
export interface CheckpointsResult { folder: string; checkpoints: Checkpoint[]; canRedo: boolean }
export interface RewindResult {
  restored: string[]; kept: string[];
  /** Files left as they were (the user's later edits overlap the agent's, unsaved, staged, a link); notes say why, one each. */
  conflicts: string[]; notes?: string[];
  commit?: string; prompt?: string;
}
export interface RewoundParams { folder: string; conversation?: string; turn: number; prompt?: string; redone?: boolean }

/** The restore kinds of a rewind, in the order offered. */
export const restoreKinds = ['both', 'files', 'conversation'] as const;

/** loom.review's argument: the accepted hunks, the rest rejected. */
export function reviewArgs(p: ProposedChangesParams, accepted: string[], comment?: string):
  { uri: string; id: string; accept: string[] | 'all'; reject: string[] | 'all'; comment?: string; conversation?: string } {
  const all = p.changes.flatMap((c) => c.hunks.map((h) => h.id));
  const acc = all.filter((id) => accepted.includes(id));
  const base = { uri: p.folder ? `file://${p.folder}` : '', id: p.id, ...(p.conversation ? { conversation: p.conversation } : {}) };
  const withComment = comment && comment.trim() !== '' ? { comment: comment.trim() } : {};
  if (acc.length === all.length) {
    return { ...base, accept: 'all', reject: [], ...withComment };
  }
  if (acc.length === 0) {
    return { ...base, accept: [], reject: 'all', ...withComment };
  }
  return { ...base, accept: acc, reject: all.filter((id) => !acc.includes(id)), ...withComment };
}

/** The counts of a unified diff: lines added and removed. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+') && !l.startsWith('+++')) {
      added++;
    } else if (l.startsWith('-') && !l.startsWith('---')) {
      removed++;
    }
  }
  return { added, removed };
}

/** A hunk's one-line label: its lines and what it changes. */
export function hunkLabel(path: string, h: ProposedHunk): { label: string; detail: string } {
  const { added, removed } = diffStat(h.diff);
  const changed = h.diff.split('\n').filter((l) => (l.startsWith('+') || l.startsWith('-')) && !l.startsWith('+++') && !l.startsWith('---'));
  return {
    label: `hunk ${h.id}: ${path}:${h.range.start.line + 1} (+${added} −${removed})`,
    detail: changed.slice(0, 3).join('  ').slice(0, 160),
  };
}

/** A checkpoint's one-line label for a quick pick. */
export function checkpointLabel(c: Checkpoint): { label: string; description: string } {
  const first = c.prompt.split('\n')[0];
  const files = c.files.length > 0 ? c.files.join(', ') : 'no file changed';
  return { label: `Turn ${c.turn}: ${first}`, description: c.compacted ? `${files} (compacted: files only)` : files };
}
