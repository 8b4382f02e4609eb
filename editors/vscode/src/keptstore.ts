// What the chat keeps across a window reload, in the workspace's Memento:
// each conversation's record as drawn (capped), written at most every
// 150 ms and at deactivation, and which conversation each folder showed.
// The next window draws that record at activation, before loom-lsp has
// started (Chat.drawKept), and asks the server for that conversation.
// No vscode imports: tested under node.
import type { SavedTranscript, Transcript } from './transcript';

/** Where the conversations are kept across a window reload (the workspace's Memento). */
export interface TranscriptStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/** The most items kept across a reload, and the most of one card's output. */
const keptItems = 400;
const keptOutput = 20_000;

/** KeptConversations writes and reads the records a window reload draws from. */
export class KeptConversations {
  /** Per record key: the write scheduled (one at a time). */
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  /**
   * isShown says whether t is the conversation the panel shows for its
   * folder: writing its record also remembers it as the one to draw
   * first in the next window.
   */
  constructor(private readonly store: TranscriptStore | undefined, private readonly isShown: (t: Transcript) => boolean,
    private readonly delayMs = 150) {}

  /** Remembers which conversation of folder is shown, for the next window. */
  rememberShown(folder: string, id: string): void {
    if (this.rememberedShown(folder) !== id) {
      void this.store?.update(shownKey(folder), id);
    }
  }

  /** The conversation of folder shown in the last window, if any. */
  rememberedShown(folder: string): string | undefined {
    return this.store?.get<string>(shownKey(folder));
  }

  /** The record kept of conversation id of folder, if any. */
  recordOf(folder: string, id: string): SavedTranscript | undefined {
    return this.store?.get<SavedTranscript>(recordKey(folder, id));
  }

  /** The record kept for t's conversation (before conversations: the folder's). */
  record(t: Transcript): SavedTranscript | undefined {
    return this.recordOf(t.folder, t.conversation) ?? this.store?.get<SavedTranscript>(`loom.transcript:${t.folder}`);
  }

  /** Forgets the record of a deleted conversation. */
  async forget(folder: string, conversation: string): Promise<void> {
    await this.store?.update(recordKey(folder, conversation), undefined);
  }

  /**
   * Keeps t's conversation for a window reload (at most every delayMs;
   * flush() at the end), under its conversation id, once it is loaded:
   * before, it would overwrite the record the reload's redraw needs. A
   * conversation without an id yet is kept once the server names it.
   */
  keep(t: Transcript): void {
    const key = recordKey(t.folder, t.conversation);
    if (!this.store || !t.loaded || t.conversation === '' || this.timers.has(key)) {
      return;
    }
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      if (t.conversation !== '' && recordKey(t.folder, t.conversation) === key) {
        void this.write(t);
      }
    }, this.delayMs));
  }

  /** Writes the records of ts now (the window is closing or reloading). */
  async flush(ts: readonly Transcript[]): Promise<void> {
    for (const timer of this.timers.values()) {
      clearTimeout(timer);
    }
    this.timers.clear();
    await Promise.all(ts.filter((t) => t.loaded && t.items.length > 0 && t.conversation !== '').map((t) => this.write(t)));
  }

  /**
   * Writes t's record; the shown conversation is also remembered as
   * shown, so that the next window draws it at once — the folder's
   * default conversation too, never picked from the list.
   */
  private async write(t: Transcript): Promise<void> {
    if (this.isShown(t)) {
      this.rememberShown(t.folder, t.conversation);
    }
    await this.store?.update(recordKey(t.folder, t.conversation), trimmed(t.saved()));
  }
}

/** Where a conversation's record is kept for a window reload. */
function recordKey(folder: string, conversation: string): string {
  return `loom.transcript:${folder}#${conversation}`;
}

/** Where the conversation a folder showed is remembered. */
function shownKey(folder: string): string {
  return `loom.shown:${folder}`;
}

/** t's saved conversation, capped for the workspace's storage. */
function trimmed(s: SavedTranscript): SavedTranscript {
  const items = s.items.slice(-keptItems).map((it) => {
    if (it.kind === 'tool' && it.output.length > keptOutput) {
      return { ...it, output: it.output.slice(0, keptOutput) + '\n… (cut; the whole result is in loom.history)' };
    }
    return it;
  });
  return { ...s, items };
}
