// The bookkeeping of the proposals waiting for the user's review
// (tools.edits = "review"): each hunk's decision as the user makes it,
// in the panel's edit card or with the diff editor's CodeLens, the
// comment, and the one loom.review the server takes per proposal (it
// takes no partial decision: every hunk is decided, then sent once).
// Also the proposed text of a file and where each hunk lands in it, for
// the diff editor. No vscode imports: tested under node.
import { diffStat, ProposedChangesParams, ProposedHunk, reviewArgs, ReviewDraft, ReviewResult } from './reviewwire';
import type { HunkDecision, ReviewCard } from './shared/review';

/** A proposal and what the user decided so far. */
export interface Proposal {
  params: ProposedChangesParams;
  /** Each decided hunk's decision, by hunk id. */
  decisions: Map<string, HunkDecision>;
  comment: string;
  state: ReviewCard['state'];
  result?: ReviewResult;
  error?: string;
}

/** ReviewBook keeps the proposals of every folder, by proposal id. */
export class ReviewBook {
  private readonly byId = new Map<string, Proposal>();

  /** Records a proposal (again: a repeat keeps the decisions made). */
  add(p: ProposedChangesParams): Proposal {
    const had = this.byId.get(p.id);
    if (had) {
      had.params = p;
      return had;
    }
    const e: Proposal = { params: p, decisions: new Map(), comment: p.draft?.comment ?? '', state: 'open' };
    this.byId.set(p.id, e);
    // What the user had decided before (a window reload): the server kept it.
    const all = hunkIds(p);
    for (const [ids, d] of [[p.draft?.accepted, 'accept'], [p.draft?.rejected, 'reject']] as const) {
      for (const h of ids ?? []) {
        if (all.includes(h)) {
          e.decisions.set(h, d);
        }
      }
    }
    return e;
  }

  /** What the user decided so far on proposal id and the comment typed, for loom.reviewDraft. */
  draft(id: string): ReviewDraft | undefined {
    const e = this.byId.get(id);
    if (!e || e.state !== 'open') {
      return undefined;
    }
    const of = (d: HunkDecision) => [...e.decisions].filter(([, x]) => x === d).map(([h]) => h);
    return { accepted: of('accept'), rejected: of('reject'), comment: e.comment };
  }

  get(id: string): Proposal | undefined {
    return this.byId.get(id);
  }

  /** The proposals still waiting for a decision, oldest first. */
  open(folder?: string): Proposal[] {
    return [...this.byId.values()].filter((e) => e.state === 'open' && (!folder || e.params.folder === folder));
  }

  /**
   * Decides hunks of an open proposal ("all": every hunk); decision
   * undefined takes the decision back. Unknown hunk ids are refused.
   * Returns whether anything changed.
   */
  decide(id: string, hunks: readonly string[] | 'all', decision: HunkDecision | undefined): boolean {
    const e = this.byId.get(id);
    if (!e || e.state !== 'open') {
      return false;
    }
    const all = hunkIds(e.params);
    const ids = hunks === 'all' ? all : hunks.filter((h) => all.includes(h));
    let changed = false;
    for (const h of ids) {
      if (e.decisions.get(h) !== decision) {
        changed = true;
        if (decision) {
          e.decisions.set(h, decision);
        } else {
          e.decisions.delete(h);
        }
      }
    }
    return changed;
  }

  /** Sets the comment of a proposal (sent with its decision). */
  setComment(id: string, text: string): void {
    const e = this.byId.get(id);
    if (e && e.state === 'open') {
      e.comment = text;
    }
  }

  /** Whether every hunk of proposal id is decided. */
  complete(id: string): boolean {
    const e = this.byId.get(id);
    return !!e && hunkIds(e.params).every((h) => e.decisions.has(h));
  }

  /** The hunks not decided yet. */
  undecided(id: string): string[] {
    const e = this.byId.get(id);
    return e ? hunkIds(e.params).filter((h) => !e.decisions.has(h)) : [];
  }

  /**
   * Starts sending proposal id's decision: all (every hunk accepted or
   * rejected) or the hunks as decided, which must then be all of them.
   * Returns loom.review's arguments, or an error in words (and nothing
   * changes).
   */
  send(id: string, folderUri: string, all?: HunkDecision): { args: ReturnType<typeof reviewArgs> } | { error: string } {
    const e = this.byId.get(id);
    if (!e) {
      return { error: 'this change is not waiting for a review any more' };
    }
    if (e.state !== 'open') {
      return { error: e.state === 'sending' ? 'the decision is already on its way' : 'this change was already decided' };
    }
    if (all) {
      this.decide(id, 'all', all);
    }
    const left = this.undecided(id);
    if (left.length > 0) {
      return { error: `decide every hunk first (${left.length === 1 ? 'hunk' : 'hunks'} ${left.join(', ')} left)` };
    }
    const accepted = hunkIds(e.params).filter((h) => e.decisions.get(h) === 'accept');
    e.state = 'sending';
    const args = reviewArgs(e.params, accepted, e.comment);
    return { args: { ...args, uri: folderUri || args.uri } };
  }

  /** The server applied the decision of proposal id. */
  settled(id: string, r: ReviewResult): void {
    const e = this.byId.get(id);
    if (e) {
      e.state = 'decided';
      e.result = r;
      e.error = undefined;
    }
  }

  /**
   * loom.review failed. A proposal the server no longer has is closed;
   * else it is open again, with its decisions, to try again.
   */
  failed(id: string, error: string, gone: boolean): void {
    const e = this.byId.get(id);
    if (e) {
      e.state = gone ? 'failed' : 'open';
      e.error = error;
    }
  }

  /** The turn of folder ended: its proposals still open were cancelled by the server. */
  closeOpen(folder: string, conversation?: string): Proposal[] {
    const out: Proposal[] = [];
    for (const e of this.byId.values()) {
      // Only that conversation's (another one's turn may still wait on its review).
      const mine = !conversation || !e.params.conversation || e.params.conversation === conversation;
      if (e.params.folder === folder && mine && (e.state === 'open' || e.state === 'sending')) {
        e.state = 'closed';
        out.push(e);
      }
    }
    return out;
  }

  /** Closes proposal id undecided (the server no longer waits on it). */
  close(id: string): void {
    const e = this.byId.get(id);
    if (e && (e.state === 'open' || e.state === 'sending')) {
      e.state = 'closed';
    }
  }

  /** The card the panel draws for proposal id. */
  card(id: string): ReviewCard | undefined {
    const e = this.byId.get(id);
    if (!e) {
      return undefined;
    }
    const c: ReviewCard = {
      id, state: e.state, comment: e.comment, ...(e.params.command ? { command: e.params.command } : {}),
      files: e.params.changes.map((f) => ({
        path: f.path, kind: f.kind,
        hunks: f.hunks.map((h) => ({ id: h.id, diff: h.diff, line: h.range.start.line + 1, ...diffStat(h.diff), decision: e.decisions.get(h.id) })),
      })),
    };
    if (e.result) {
      c.applied = e.result.applied;
      c.rejected = e.result.rejected;
      c.conflicts = e.result.conflicts ?? [];
    }
    if (e.error) {
      c.error = e.error;
    }
    const others = this.siblings(id).length;
    if (e.state === 'open' && others > 0) {
      c.others = others;
    }
    return c;
  }

  /**
   * The other edit proposals of proposal id's response (same folder,
   * conversation and turn) still waiting: proposed together, decided
   * together when the user asks. A command's changes are never among them.
   */
  siblings(id: string): Proposal[] {
    const e = this.byId.get(id);
    if (!e || e.params.command) {
      return [];
    }
    const p = e.params;
    return [...this.byId.values()].filter((x) => x !== e && x.state === 'open' && !x.params.command && x.params.folder === p.folder &&
      (x.params.conversation ?? '') === (p.conversation ?? '') && x.params.turn === p.turn);
  }
}

/** Every hunk id of a proposal, in order. */
export function hunkIds(p: ProposedChangesParams): string[] {
  return p.changes.flatMap((c) => c.hunks.map((h) => h.id));
}

/** A hunk's changed lines: those it removes from the file and those it adds. */
interface HunkLines { removed: string[]; added: string[] }

/**
 * Splits text into lines that keep their end ("\n"; "\r\n" keeps its
 * "\r"); the last line has none when the text does not end with one.
 */
export function splitLines(text: string): string[] {
  const out = text.split('\n').map((l) => l + '\n');
  const last = out.pop()!;
  if (last !== '\n') {
    out.push(last.slice(0, -1));
  }
  return out;
}

/** The lines a one-hunk unified diff removes and adds, with their line ends. */
function hunkLines(diff: string): HunkLines {
  const removed: string[] = [];
  const added: string[] = [];
  let lastSide: string[] | undefined;
  for (const l of diff.split('\n')) {
    const c = l[0];
    if (c === '-') {
      removed.push(l.slice(1) + '\n');
      lastSide = removed;
    } else if (c === '+') {
      added.push(l.slice(1) + '\n');
      lastSide = added;
    } else if (c === '\\') {
      // "\ No newline at end of file": the line before ends the file.
      if (lastSide && lastSide.length > 0) {
        lastSide[lastSide.length - 1] = lastSide[lastSide.length - 1].replace(/\n$/, '');
      }
    } else if (c === ' ') {
      lastSide = undefined;
    }
  }
  return { removed, added };
}

/**
 * The text current becomes with the hunks applied (each replaces the
 * lines of its range), and the 0-based line where each hunk's change
 * starts in that text. Undefined when current no longer holds the lines
 * a hunk removes (the file changed since the proposal).
 */
export function proposedText(current: string, hunks: readonly ProposedHunk[]): { text: string; anchors: Map<string, number> } | undefined {
  const lines = splitLines(current);
  const sorted = [...hunks].sort((a, b) => a.range.start.line - b.range.start.line);
  const out: string[] = [];
  const anchors = new Map<string, number>();
  let at = 0;
  for (const h of sorted) {
    // The lines the hunk removes, from its diff (the range's end is one
    // line short when they run to a last line without a line end).
    const start = h.range.start.line;
    const { removed, added } = hunkLines(h.diff);
    const end = start + removed.length;
    if (start < at || end > lines.length) {
      return undefined;
    }
    for (let i = 0; i < removed.length; i++) {
      if (!sameLine(lines[start + i], removed[i])) {
        return undefined;
      }
    }
    out.push(...lines.slice(at, start));
    anchors.set(h.id, out.length);
    out.push(...added);
    at = end;
  }
  out.push(...lines.slice(at));
  return { text: out.join(''), anchors };
}

/**
 * For a command's changes (already on disk): the text before the command
 * from the text now (every hunk taken back), and the 0-based line where
 * each hunk's change is in the text now. Undefined when the text now no
 * longer holds the lines a hunk added.
 */
export function textBefore(now: string, hunks: readonly ProposedHunk[]): { text: string; anchors: Map<string, number> } | undefined {
  const lines = splitLines(now);
  const sorted = [...hunks].sort((a, b) => a.range.start.line - b.range.start.line);
  const out: string[] = [];
  const anchors = new Map<string, number>();
  let at = 0;
  let shift = 0; // lines added minus removed by the hunks before
  for (const h of sorted) {
    const { removed, added } = hunkLines(h.diff);
    const start = h.range.start.line + shift;
    const end = start + added.length;
    if (start < at || end > lines.length) {
      return undefined;
    }
    for (let i = 0; i < added.length; i++) {
      if (!sameLine(lines[start + i], added[i])) {
        return undefined;
      }
    }
    out.push(...lines.slice(at, start));
    anchors.set(h.id, start);
    out.push(...removed);
    at = end;
    shift += added.length - removed.length;
  }
  out.push(...lines.slice(at));
  return { text: out.join(''), anchors };
}

/** Lines equal but for the end of the file's last line. */
function sameLine(a: string | undefined, b: string): boolean {
  return a !== undefined && (a === b || a.replace(/\n$/, '') === b.replace(/\n$/, ''));
}

/** The 0-based lines of a unified diff where each of the hunks' @@ headers is, in order. */
export function headerLines(diff: string): number[] {
  const out: number[] = [];
  diff.split('\n').forEach((l, i) => {
    if (l.startsWith('@@')) {
      out.push(i);
    }
  });
  return out;
}
