// The conversations of each workspace folder as the extension keeps them:
// one Transcript per conversation id, which one the panel shows, and the
// folder's list (loom.conversations) merged with what runs here. Every
// notification of the server names its conversation; route() finds the
// transcript it belongs to, so a conversation running while another is
// read keeps receiving its own text and nothing of the other's.
// No vscode imports: tested under node.
import { DeltaAssembler } from './assembler';
import type { ConversationEntry } from './shared/messages';
import { Transcript } from './transcript';

/** One conversation of loom.conversations' reply. */
export interface ConversationInfo {
  id: string;
  folder?: string;
  /** The first prompt's first line, or the title set; "" before any prompt. */
  title: string;
  /** When it was last used (RFC 3339). */
  updated?: string;
  turns: number;
  /** Open in this loom-lsp. */
  live: boolean;
  /** Open in another loom process: read-only here. */
  elsewhere?: boolean;
}

/** The title of a conversation with no prompt yet. */
export const untitled = 'New conversation';

/** Conversations keeps every folder's transcripts by conversation id. */
export class Conversations {
  /** folder + NUL + conversation id → its transcript. */
  private readonly byKey = new Map<string, Transcript>();
  /** folder → the id of the conversation the panel shows ("" until the server names one). */
  private readonly shownIds = new Map<string, string>();
  /** folder → loom.conversations' last reply. */
  private readonly lists = new Map<string, ConversationInfo[]>();
  /**
   * folder → the one delta checker of its conversations: the server
   * numbers a folder's deltas across all its conversations.
   */
  private readonly assemblers = new Map<string, DeltaAssembler>();

  constructor(private readonly nameOf: (folder: string) => string) {}

  /** The id of the conversation shown for folder ("" while unknown). */
  shownId(folder: string): string {
    return this.shownIds.get(folder) ?? '';
  }

  /** The transcript the panel shows for folder (created on first use). */
  shown(folder: string): Transcript {
    return this.get(folder, this.shownId(folder));
  }

  /** Whether conversation id of folder is the one shown ("" while the server has named none). */
  isShown(folder: string, id: string | undefined): boolean {
    return (id ?? '') === this.shownId(folder);
  }

  /** The transcript of (folder, id), created on first use. */
  get(folder: string, id: string): Transcript {
    const key = keyOf(folder, id);
    let t = this.byKey.get(key);
    if (!t) {
      t = new Transcript(folder, this.nameOf(folder), this.assembler(folder));
      t.conversation = id;
      this.byKey.set(key, t);
    }
    return t;
  }

  /** The transcript of (folder, id), if there is one. */
  find(folder: string, id: string): Transcript | undefined {
    return this.byKey.get(keyOf(folder, id));
  }

  private assembler(folder: string): DeltaAssembler {
    let a = this.assemblers.get(folder);
    if (!a) {
      a = new DeltaAssembler();
      this.assemblers.set(folder, a);
    }
    return a;
  }

  /**
   * The transcript a server message of folder about conversation id goes
   * to. No id (the folder's own notices): the shown one. While the shown
   * conversation is still unknown, the first one the server names is
   * it (adopted reports that: the panel must be redrawn).
   */
  route(folder: string, id: string | undefined): { transcript: Transcript; adopted: boolean } {
    if (!id) {
      return { transcript: this.shown(folder), adopted: false };
    }
    const adopted = this.adopt(folder, id);
    return { transcript: this.get(folder, id), adopted };
  }

  /**
   * Names the shown conversation when it is still unknown ("" → id): the
   * transcript drawn so far becomes id's. Returns whether it did.
   */
  adopt(folder: string, id: string): boolean {
    if (!id || this.shownId(folder) !== '') {
      return false;
    }
    const nameless = this.find(folder, '');
    this.byKey.delete(keyOf(folder, ''));
    if (nameless && !this.find(folder, id)) {
      nameless.conversation = id;
      this.byKey.set(keyOf(folder, id), nameless);
    }
    this.shownIds.set(folder, id);
    return true;
  }

  /** Shows conversation id of folder; fresh says its transcript is new (draw it from the server). */
  show(folder: string, id: string): { transcript: Transcript; fresh: boolean } {
    const fresh = !this.find(folder, id);
    if (this.find(folder, '')?.items.length === 0) {
      this.byKey.delete(keyOf(folder, ''));
    }
    this.shownIds.set(folder, id);
    return { transcript: this.get(folder, id), fresh };
  }

  /** Forgets conversation id of folder (deleted); the list drops it too. */
  remove(folder: string, id: string): Transcript | undefined {
    const t = this.find(folder, id);
    this.byKey.delete(keyOf(folder, id));
    this.lists.set(folder, (this.lists.get(folder) ?? []).filter((c) => c.id !== id));
    if (this.shownId(folder) === id) {
      this.shownIds.delete(folder);
    }
    return t;
  }

  /** Every transcript, of every folder and conversation. */
  all(): Transcript[] {
    return [...this.byKey.values()];
  }

  /** The transcripts of folder. */
  of(folder: string): Transcript[] {
    return this.all().filter((t) => t.folder === folder);
  }

  /** Records loom.conversations' reply for folder. */
  setList(folder: string, list: readonly ConversationInfo[]): void {
    this.lists.set(folder, list.filter((c) => typeof c?.id === 'string' && c.id !== ''));
  }

  /** The title of conversation id: the one set or the server's, else its first prompt, else "New conversation". */
  title(folder: string, id: string): string {
    const listed = (this.lists.get(folder) ?? []).find((c) => c.id === id)?.title?.trim();
    if (listed) {
      return listed;
    }
    const first = this.find(folder, id)?.items.find((i) => i.kind === 'user');
    const line = first?.kind === 'user' ? first.text.trim().split('\n')[0] : '';
    return line ? clip(line, 80) : untitled;
  }

  /**
   * The list the panel shows for folder: the conversations running here
   * and not listed yet (new ones) first, then the server's list (most
   * recent first); each with whether it is running, waiting for an
   * approval, and shown.
   */
  entries(folder: string): ConversationEntry[] {
    const listed = this.lists.get(folder) ?? [];
    const ids = new Set(listed.map((c) => c.id));
    const shown = this.shownId(folder);
    const extra = this.of(folder).filter((t) => t.conversation !== '' && !ids.has(t.conversation));
    // An empty conversation (no prompt, no title) is listed only while shown: New reuses it.
    const empty = (id: string, info?: ConversationInfo) => id !== shown && !info?.title && (info?.turns ?? 0) === 0 &&
      (this.find(folder, id)?.items.length ?? 0) === 0;
    const entry = (id: string, info?: ConversationInfo): ConversationEntry => {
      const t = this.find(folder, id);
      return {
        id,
        title: this.title(folder, id),
        updated: t?.updated ?? info?.updated,
        turns: Math.max(info?.turns ?? 0, t?.turns() ?? 0),
        running: t?.busy() ?? false,
        waiting: t?.pendingApproval() !== undefined,
        current: id === shown,
        ...(info?.elsewhere ? { elsewhere: true } : {}),
      };
    };
    return [...extra.filter((t) => !empty(t.conversation)).map((t) => entry(t.conversation)),
      ...listed.filter((c) => !empty(c.id, c)).map((c) => entry(c.id, c))];
  }
}

function keyOf(folder: string, id: string): string {
  return folder + '\u0000' + id;
}

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}
