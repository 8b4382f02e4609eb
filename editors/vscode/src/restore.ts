// Restore checkpoint in the panel, the pure part: which checkpoint a
// prompt of the conversation is, and the words said in the chat after a
// rewind or a redo. No vscode imports: tested under node.
import type { Checkpoint, RewindResult } from './reviewwire';
import type { RestoreKind } from './shared/messages';

/** A prompt as the panel shows it: its text and the turn it ran as, when known. */
export interface ShownPrompt { text: string; turn?: number }

/**
 * The checkpoint of users[index] (the panel's prompts, in order): the
 * one of its turn when the prompts agree; else, counting from the end
 * (a redraw from loom.history numbers turns by position, and compaction
 * folds old prompts away), the checkpoint at the same place from the
 * end with the same prompt. undefined when none matches.
 */
export function matchCheckpoint(cps: readonly Checkpoint[], users: readonly ShownPrompt[], index: number): Checkpoint | undefined {
  const it = users[index];
  if (!it) {
    return undefined;
  }
  const byTurn = cps.find((c) => c.turn === it.turn && samePrompt(it.text, c.prompt));
  if (byTurn) {
    return byTurn;
  }
  const open = cps.filter((c) => !c.compacted);
  const fromEnd = users.length - 1 - index;
  const cp = open[open.length - 1 - fromEnd];
  return cp && samePrompt(it.text, cp.prompt) ? cp : undefined;
}

/** Whether a prompt as shown is a checkpoint's (the server may add context after it). */
export function samePrompt(shown: string, sent: string): boolean {
  const a = shown.trim();
  const b = sent.trim();
  return a === b || (a !== '' && b.startsWith(a));
}

const restoreWords: Record<RestoreKind, string> = {
  both: 'the files and the conversation',
  files: 'the files',
  conversation: 'the conversation',
};

/** The menu's labels of each restore kind, in the order offered. */
export const restoreChoices: readonly { restore: RestoreKind; label: string; detail: string }[] = [
  { restore: 'both', label: 'Files and conversation', detail: "take back the agent's changes since this prompt and the conversation from it; the prompt comes back to the input" },
  { restore: 'files', label: 'Files only', detail: "take back the agent's changes since this prompt; the conversation stays" },
  { restore: 'conversation', label: 'Conversation only', detail: 'cut the conversation back to before this prompt, which comes back to the input; the files stay' },
];

/** What the chat says after a rewind from the panel. */
export function rewindSaid(turn: number, restore: RestoreKind, r: RewindResult): string {
  let msg = `Restored ${restoreWords[restore]} to before turn ${turn}.`;
  if (restore !== 'conversation') {
    if (r.restored.length > 0) {
      msg += ` Files restored: ${r.restored.join(', ')}`;
      msg += r.commit ? ` (commit ${r.commit.slice(0, 7)}).` : '.';
    } else {
      msg += ' No file to restore: the agent changed none since.';
    }
    if (r.kept.length > 0) {
      msg += ` Your own edits were kept in ${r.kept.join(', ')}.`;
    }
    if (r.conflicts.length > 0) {
      const why = r.notes?.length ? `: ${r.notes.join('; ')}` : " (your edits overlap the agent's)";
      msg += ` Left as they are: ${r.conflicts.join(', ')}${why}.`;
    }
  }
  if (r.prompt) {
    msg += ' Your prompt is back in the input to edit and send again.';
  }
  return msg + ' Redo undoes this until your next prompt.';
}

/** What the chat says after a redo. */
export function redoSaid(r: RewindResult): string {
  let msg = 'Redone: the rewind is undone.';
  if (r.restored.length > 0) {
    msg += ` The agent's changes are back in ${r.restored.join(', ')}.`;
  }
  if (r.kept.length > 0) {
    msg += ` Your own edits were kept in ${r.kept.join(', ')}.`;
  }
  return msg;
}
