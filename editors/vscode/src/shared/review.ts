// The edit card's part of the message protocol between the extension and
// the chat webview (tools.edits = "review"): how a proposal is drawn in
// its tool card, and what the user does there. No imports: it loads in
// the browser and under node.

/** A hunk's decision: accepted, rejected, or not decided yet (absent). */
export type HunkDecision = 'accept' | 'reject';

/** One hunk of a proposal, as the card draws it. */
export interface ReviewHunk {
  id: string;
  /** The hunk's unified diff (one @@ header, its context lines). */
  diff: string;
  /** 1-based line of the current file where the hunk starts. */
  line: number;
  added: number;
  removed: number;
  decision?: HunkDecision;
}

/** One file of a proposal. */
export interface ReviewFile {
  path: string;
  /** edit, create, delete or command. */
  kind: string;
  hunks: ReviewHunk[];
}

/**
 * A proposal in its tool card. open: waiting for the user; sending:
 * loom.review is on its way; decided: the server answered (applied /
 * rejected / conflicts); failed: loom.review failed (error); closed: the
 * turn ended before a decision (cancelled).
 */
export interface ReviewCard {
  id: string;
  state: 'open' | 'sending' | 'decided' | 'failed' | 'closed';
  files: ReviewFile[];
  /**
   * A command's changes (already on disk): the command line. Accept is
   * then Keep (committed) and Reject is Discard (taken back).
   */
  command?: string;
  /** The comment typed so far (sent with the decision). */
  comment: string;
  applied?: string[];
  rejected?: string[];
  /** Accepted hunks left out because the user changed the same lines. */
  conflicts?: string[];
  error?: string;
  /**
   * How many other files of the same response wait for a decision (their
   * own cards): the card then offers to accept or reject them all.
   */
  others?: number;
}

/** What the user does on an edit card. */
export type ReviewIntent =
  /** Decide hunks (of one file, or all); decision undefined un-decides. */
  | { kind: 'decide'; id: string; hunks: string[] | 'all'; decision?: HunkDecision }
  /** The comment box changed. */
  | { kind: 'comment'; id: string; text: string }
  /** Send the decision: the hunks as decided, or all accepted / all rejected. */
  | { kind: 'submit'; id: string; all?: HunkDecision; comment?: string }
  /** Send the decision of every file of the response that waits (this card's and the others'): all accepted / all rejected. */
  | { kind: 'submitResponse'; id: string; all: HunkDecision; comment?: string }
  /** Open a file of the proposal in VS Code's diff editor (CodeLens per hunk). */
  | { kind: 'openDiff'; id: string; path: string }
  /** The header toggle "Review edits before they apply". */
  | { kind: 'toggle'; on: boolean };
