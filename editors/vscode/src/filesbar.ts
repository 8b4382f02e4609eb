// The changed-files bar's model, one per folder: the files the agent's
// auto-commits changed since the user last kept them (loom/commit), and
// the files commands changed and nobody kept or discarded yet
// (loom/commandChanges). The bar draws list(); keep, undo and discard
// take files out. No vscode imports: tested under node.
import { diffStat } from './reviewwire';
import type { BarFile } from './shared/messages';

/** One file the agent changed: its commits (oldest first) and counts. */
interface AgentFile { path: string; commits: string[]; added: number; removed: number; counted: boolean }

/** A command's change as loom/commandChanges and loom.commandChanges give it. */
export interface CommandChangeWire {
  /** Absolute path; rel is relative to the repository's top. */
  path: string;
  rel: string;
  command: string;
  turn: number;
  created?: boolean;
  deleted?: boolean;
  size?: number;
  diff?: string;
  binary?: boolean;
}

/** loom/commandChanges' parameters. */
export interface CommandChangesParams { folder: string; turn: number; changes: CommandChangeWire[] }

/** What a bar keeps across a window reload: the agent's files and their commits. */
export interface SavedBar {
  version: 1;
  agent: { path: string; commits: string[] }[];
  /** The conversation of each commit (by sha), when not the folder's default. */
  conversations?: Record<string, string>;
}

/** ChangedFiles keeps one folder's bar. */
export class ChangedFiles {
  private readonly agent = new Map<string, AgentFile>();
  private readonly commands = new Map<string, CommandChangeWire>();
  /** Files being kept as a command's change: their commit is not the agent's. */
  private readonly keeping = new Set<string>();
  /** The conversation that made each commit ("": the folder's default), for loom.undoFile. */
  private readonly conversationOf = new Map<string, string>();

  /** An auto-commit (loom/commit) of conversation: its files join the bar, or gain the commit. */
  commit(sha: string, files: readonly string[], conversation = ''): string[] {
    const fresh: string[] = [];
    if (conversation) {
      this.conversationOf.set(sha, conversation);
    }
    for (const path of files) {
      if (this.keeping.delete(path)) {
        continue; // the commit of a command's change the user kept
      }
      const f = this.agent.get(path);
      if (f) {
        if (!f.commits.includes(sha)) {
          f.commits.push(sha);
          f.counted = false;
        }
      } else {
        this.agent.set(path, { path, commits: [sha], added: 0, removed: 0, counted: false });
      }
      fresh.push(path);
    }
    return fresh;
  }

  /** Files whose counts are not known yet, with their commits. */
  uncounted(): { path: string; commits: string[] }[] {
    return [...this.agent.values()].filter((f) => !f.counted).map((f) => ({ path: f.path, commits: [...f.commits] }));
  }

  /** The counts of path's change over commits (ignored when commits grew since). */
  counted(path: string, commits: readonly string[], added: number, removed: number): void {
    const f = this.agent.get(path);
    if (f && f.commits.length === commits.length && f.commits.every((c, i) => c === commits[i])) {
      f.added = added;
      f.removed = removed;
      f.counted = true;
    }
  }

  /** Commands' changes reported (or listed again): they replace the ones of the same files. */
  commandChanges(changes: readonly CommandChangeWire[]): void {
    for (const c of changes) {
      this.commands.set(c.rel, c);
    }
  }

  /** Replaces the commands' changes by the server's list (loom.commandChanges). */
  setCommandChanges(changes: readonly CommandChangeWire[]): void {
    this.commands.clear();
    this.commandChanges(changes);
  }

  /** The agent file of path, if any: its commits, oldest first. */
  agentFile(path: string): { path: string; commits: string[] } | undefined {
    const f = this.agent.get(path);
    return f ? { path: f.path, commits: [...f.commits] } : undefined;
  }

  /** path's commits grouped by the conversation that made them (loom.undoFile runs per conversation). */
  undoGroups(path: string): { conversation: string; commits: string[] }[] {
    const groups: { conversation: string; commits: string[] }[] = [];
    for (const sha of this.agent.get(path)?.commits ?? []) {
      const conversation = this.conversationOf.get(sha) ?? '';
      const g = groups.find((x) => x.conversation === conversation);
      if (g) {
        g.commits.push(sha);
      } else {
        groups.push({ conversation, commits: [sha] });
      }
    }
    return groups;
  }

  /** What to keep across a window reload. */
  saved(): SavedBar {
    const agent = [...this.agent.values()].map((f) => ({ path: f.path, commits: [...f.commits] }));
    const conversations: Record<string, string> = {};
    for (const f of agent) {
      for (const sha of f.commits) {
        const c = this.conversationOf.get(sha);
        if (c) {
          conversations[sha] = c;
        }
      }
    }
    return Object.keys(conversations).length > 0 ? { version: 1, agent, conversations } : { version: 1, agent };
  }

  /** Takes back what saved() kept, when the bar has no agent file yet; false when it is no record. */
  restore(saved: SavedBar | undefined): boolean {
    if (!saved || saved.version !== 1 || !Array.isArray(saved.agent) || this.agent.size > 0) {
      return false;
    }
    for (const f of saved.agent) {
      if (typeof f?.path === 'string' && Array.isArray(f.commits) && f.commits.length > 0 && f.commits.every((c) => typeof c === 'string')) {
        this.agent.set(f.path, { path: f.path, commits: [...f.commits], added: 0, removed: 0, counted: false });
      }
    }
    for (const [sha, c] of Object.entries(saved.conversations ?? {})) {
      if (typeof c === 'string') {
        this.conversationOf.set(sha, c);
      }
    }
    return true;
  }

  /** The command change of path, if any. */
  commandChange(path: string): CommandChangeWire | undefined {
    return this.commands.get(path);
  }

  /** The paths of the bar (all when paths is absent), split by source. */
  select(paths?: readonly string[]): { agent: string[]; command: string[] } {
    const want = (p: string) => !paths || paths.includes(p);
    return {
      agent: [...this.agent.keys()].filter(want),
      command: [...this.commands.keys()].filter(want),
    };
  }

  /** Takes files out of the bar (kept, undone, discarded). */
  remove(paths: readonly string[], source?: 'agent' | 'command'): void {
    for (const p of paths) {
      if (source !== 'command') {
        this.agent.delete(p);
      }
      if (source !== 'agent') {
        this.commands.delete(p);
      }
    }
  }

  /**
   * Marks paths as being kept as commands' changes: the next commit of
   * each (loom/commit may come after loom.commit's answer) is not the
   * agent's. The function returned unmarks those not committed yet (the
   * keep failed, or its commit never came).
   */
  keepingCommands(paths: readonly string[]): () => void {
    for (const p of paths) {
      this.keeping.add(p);
    }
    return () => {
      for (const p of paths) {
        this.keeping.delete(p);
      }
    };
  }

  /** Commits taken back (loom.undo, a rewind): a file left with none leaves the bar. */
  undone(shas: readonly string[]): void {
    const gone = (c: string) => shas.some((s) => s.length >= 4 && (c.startsWith(s) || s.startsWith(c)));
    for (const [p, f] of this.agent) {
      const left = f.commits.filter((c) => !gone(c));
      if (left.length === 0) {
        this.agent.delete(p);
      } else if (left.length !== f.commits.length) {
        f.commits = left;
        f.counted = false;
      }
    }
  }

  /** Whether the bar is empty. */
  get empty(): boolean {
    return this.agent.size === 0 && this.commands.size === 0;
  }

  /** What the bar draws: the agent's files, then the commands', each by path. */
  list(): BarFile[] {
    const agent = [...this.agent.values()].sort((a, b) => a.path.localeCompare(b.path)).map((f): BarFile => ({
      path: f.path, source: 'agent', added: f.added, removed: f.removed,
    }));
    const commands = [...this.commands.values()].sort((a, b) => a.rel.localeCompare(b.rel)).map((c): BarFile => {
      const { added, removed } = c.diff ? diffStat(c.diff) : { added: 0, removed: 0 };
      const f: BarFile = { path: c.rel, source: 'command', added, removed, command: c.command };
      if (c.created) {
        f.created = true;
      }
      if (c.deleted) {
        f.deleted = true;
      }
      if (c.binary) {
        f.binary = true;
      }
      return f;
    });
    return [...agent, ...commands];
  }
}

/** Parses `git diff --numstat` output of one file: binary files count 0. */
export function parseNumstat(out: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of out.split('\n')) {
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(line);
    if (m) {
      added += m[1] === '-' ? 0 : Number(m[1]);
      removed += m[2] === '-' ? 0 : Number(m[2]);
    }
  }
  return { added, removed };
}
