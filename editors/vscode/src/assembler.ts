// Assembles loom/displayMessage deltas into per-(folder, turn) text and
// checks their seq numbers. No vscode imports: it is tested under node.
import type { DisplayMessageParams } from './protocol';

/** What to do with a delta. */
export type Verdict =
  | { kind: 'show' }              // in order
  | { kind: 'gap'; missing: number } // shown, but text was lost before it
  | { kind: 'stale' }             // a duplicate or reordered delta: dropped
  | { kind: 'restart' };          // seq 1 again: the server restarted

/**
 * DeltaAssembler keeps the text of each turn and the last seq of each
 * folder. The server numbers a folder's deltas 1, 2, 3, …, so a jump
 * means lost text (redraw from loom.history) and a repeat is dropped.
 */
export class DeltaAssembler {
  private last = new Map<string, number>();
  private gaps = new Set<string>();
  private texts = new Map<string, string>();

  /** Checks and records a delta; returns what to do with it. */
  push(p: DisplayMessageParams): Verdict {
    const last = this.last.get(p.folder);
    let v: Verdict;
    if (last === undefined) {
      v = { kind: 'show' };
    } else if (p.seq === 1 && last >= 1) {
      v = { kind: 'restart' };
    } else if (p.seq <= last) {
      return { kind: 'stale' };
    } else if (p.seq === last + 1) {
      v = { kind: 'show' };
    } else {
      v = { kind: 'gap', missing: p.seq - last - 1 };
      this.gaps.add(p.folder);
    }
    this.last.set(p.folder, p.seq);
    if (p.kind !== 'thought') { // thinking shares the seq, not the answer's text
      const key = turnKey(p.folder, p.turn);
      this.texts.set(key, (this.texts.get(key) ?? '') + p.text);
    }
    return v;
  }

  /** Drops the last n characters of a turn's text (a retracted partial answer). */
  drop(folder: string, turn: number, n: number): void {
    const key = turnKey(folder, turn);
    const text = this.texts.get(key) ?? '';
    this.texts.set(key, text.slice(0, Math.max(0, text.length - n)));
  }

  /** The text shown so far of a turn. */
  text(folder: string, turn: number): string {
    return this.texts.get(turnKey(folder, turn)) ?? '';
  }

  /** Whether the folder lost text since the last call; forgets it. */
  takeGap(folder: string): boolean {
    const had = this.gaps.has(folder);
    this.gaps.delete(folder);
    return had;
  }

  /** Forgets a folder's turns (after a redraw or reset); keeps its seq. */
  clearTexts(folder: string): void {
    for (const k of [...this.texts.keys()]) {
      if (k.startsWith(folder + '\u0000')) {
        this.texts.delete(k);
      }
    }
  }
}

function turnKey(folder: string, turn: number): string {
  return folder + '\u0000' + String(turn);
}
