// The panel's changed-files bar and per-prompt Restore checkpoint, the
// VS Code side: keeps each folder's bar (filesbar.ts) from loom/commit
// and loom/commandChanges, answers the bar's Keep / Undo / open diff and
// the prompts' Restore checkpoint / the notice's Redo, through the
// server's commands (loom.undoFile, loom.commit, loom.discard,
// loom.checkpoints, loom.rewind, loom.redo).
import * as path from 'path';
import * as vscode from 'vscode';
import type { Chat } from './chat';
import { ChangedFiles, CommandChangesParams, CommandChangeWire, SavedBar } from './filesbar';
import { agentCounts, gitTop, textAt } from './gitfiles';
import type { CommitParams, UndoResult } from './protocol';
import { matchCheckpoint, redoSaid, rewindSaid } from './restore';
import type { CheckpointsResult, RewindResult, RewoundParams } from './reviewwire';
import type { BarFile, FromWebview, RestoreKind } from './shared/messages';

/** loom/commandChanges: a turn's commands changed files (not committed). */
export const commandChangesMethod = 'loom/commandChanges';

/** Server notices the panel says in its own words while its own call runs. */
const ownWords = /^(rewound the |redid: )/;

/** Checkpoints runs the bar and the checkpoints of every folder. */
export class Checkpoints implements vscode.TextDocumentContentProvider {
  /** The scheme of the left side of a bar file's diff: the file before the agent's change. */
  static readonly scheme = 'loom-base';
  private readonly bars = new Map<string, ChangedFiles>();
  private readonly tops = new Map<string, string>();
  private readonly texts = new Map<string, string>();
  // The maps below are per conversation: key(folder, conversation).
  /** Conversations where a rewind or redo of the panel is running. */
  private readonly running = new Set<string>();
  /** The notice whose Redo button stands, until the next prompt. */
  private readonly redoNotice = new Map<string, { id: string; conversation: string }>();
  /** The prompt the panel's last rewind put back in the input (a redo takes it out again). */
  private readonly rewoundPrompt = new Map<string, string>();
  /** The restore kind of the panel's last rewind (its redo changes the conversation unless files). */
  private readonly lastRestore = new Map<string, RestoreKind>();
  /**
   * The loom/rewound notifications the panel's own rewind or redo
   * will bring; the panel redraws for them itself (a second redraw, in
   * whatever order the two arrive, would take its notice away).
   */
  private readonly expected = new Map<string, number>();

  /** store keeps each folder's agent files across a window reload (the workspace's Memento). */
  constructor(private readonly chat: Chat, private readonly store?: { get<T>(key: string): T | undefined; update(key: string, value: unknown): Thenable<void> }) {}

  /** The bar of folder (created on first use). */
  bar(folder: string): ChangedFiles {
    let b = this.bars.get(folder);
    if (!b) {
      b = new ChangedFiles();
      this.bars.set(folder, b);
    }
    return b;
  }

  /** What folder's bar draws. */
  files(folder: string): BarFile[] {
    return this.bar(folder).list();
  }

  private draw(folder: string): void {
    this.chat.panel.filesBar(folder, this.files(folder));
    void this.store?.update(`loom.filesBar:${folder}`, this.bar(folder).saved());
  }

  private async top(folder: string): Promise<string> {
    let t = this.tops.get(folder);
    if (!t) {
      t = await gitTop(folder).catch(() => folder);
      this.tops.set(folder, t);
    }
    return t;
  }

  /** The key of a folder's conversation (the one shown when absent) in the maps above. */
  private key(folder: string, conversation?: string): string {
    return `${folder}#${conversation ?? this.chat.transcript(folder).conversation}`;
  }

  /** The folder and its conversation shown (a command names its own conversation after this). */
  private uri(folder: string): { uri: string; conversation?: string } {
    const conversation = this.chat.transcript(folder).conversation;
    return { uri: vscode.Uri.file(folder).toString(), ...(conversation ? { conversation } : {}) };
  }

  // --- the server's notifications ------------------------------------------------

  /** loom/commit: the agent's files join the bar; their counts follow from git. */
  commit(p: CommitParams): void {
    const conversation = (p as { conversation?: string }).conversation ?? '';
    if (this.bar(p.folder).commit(p.sha, p.files ?? [], conversation).length > 0) {
      this.draw(p.folder);
      void this.count(p.folder);
    }
  }

  /** loom/commandChanges: the files a command changed join the bar. */
  commandChanges(p: CommandChangesParams): void {
    this.bar(p.folder).commandChanges(p.changes ?? []);
    this.draw(p.folder);
  }

  /**
   * Draws folder's bar after a start or a reload: the agent's files kept
   * before it (counted again from git), and the commands' changes the
   * server still has pending.
   */
  async load(folder: string, known?: CommandChangeWire[]): Promise<void> {
    if (this.bar(folder).restore(this.store?.get<SavedBar>(`loom.filesBar:${folder}`))) {
      void this.count(folder);
    }
    try {
      // loom.panelState's, else asked.
      const changes = known ?? (await this.chat.exec<{ changes: CommandChangeWire[] | null }>('loom.commandChanges', this.uri(folder)))?.changes;
      this.bar(folder).setCommandChanges(changes ?? []);
      this.draw(folder);
    } catch { /* the server did not answer: commands' changes come with their notification */ }
  }

  /** A commit was undone from the chat (its Undo): its files leave the bar if nothing else is left. */
  undone(folder: string, sha: string | undefined): void {
    if (sha) {
      this.bar(folder).undone([sha]);
      this.draw(folder);
    }
  }

  /** A prompt was sent: the last rewind's Redo goes. */
  asked(folder: string): void {
    const k = this.key(folder);
    this.expected.delete(k);
    this.lastRestore.delete(k);
    this.rewoundPrompt.delete(k);
    this.dropRedo(folder, k);
  }

  /** The last rewind's notice loses its Redo. */
  private dropRedo(folder: string, k: string): void {
    const n = this.redoNotice.get(k);
    this.redoNotice.delete(k);
    const conversation = n?.conversation || undefined;
    const it = n ? this.chat.transcriptOf(folder, conversation).get(n.id) : undefined;
    if (it?.kind === 'notice' && it.action === 'redo') {
      it.action = undefined;
      this.chat.show(folder, [it], conversation);
    }
  }

  /** Whether a server notice is one the panel says itself (its rewind or redo is running in that conversation). */
  quiet(folder: string, text: string, conversation?: string): boolean {
    return this.running.has(this.key(folder, conversation)) && ownWords.test(text);
  }

  /** loom/rewound: the conversation changed; its prompt comes back to the input. */
  async rewound(p: RewoundParams): Promise<void> {
    const k = this.key(p.folder, p.conversation);
    const n = this.expected.get(k) ?? 0;
    if (n > 0) {
      this.expected.set(k, n - 1);
      return;
    }
    // From loom.history alone: the conversation drawn before is not the server's any more.
    await this.chat.redraw(p.folder, false, p.conversation ? this.chat.transcriptOf(p.folder, p.conversation) : undefined);
    if (!p.redone && p.prompt && this.chat.shows(p.folder, p.conversation ?? this.chat.transcript(p.folder).conversation)) {
      this.chat.panel.fill(p.prompt);
    }
  }

  private async count(folder: string): Promise<void> {
    const bar = this.bar(folder);
    const top = await this.top(folder);
    for (const f of bar.uncounted()) {
      try {
        const c = await agentCounts(top, f.commits, f.path);
        bar.counted(f.path, f.commits, c.added, c.removed);
      } catch { /* not counted: the bar shows no counts */ }
    }
    this.draw(folder);
  }

  // --- the panel's messages ----------------------------------------------------------

  async handle(msg: FromWebview): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    if (msg.type === 'bar') {
      if (msg.action === 'keep') {
        await this.keep(folder, msg.paths);
      } else if (msg.action === 'undo') {
        await this.undo(folder, msg.paths);
      } else if (msg.paths?.[0]) {
        await this.openDiff(folder, msg.paths[0]);
      }
    } else if (msg.type === 'restore') {
      await this.restore(folder, msg.itemId, msg.restore);
    } else if (msg.type === 'action' && msg.action === 'redo') {
      await this.redo(folder);
    }
  }

  /**
   * Keep: the agent's files leave the bar (their changes are committed
   * already); the commands' changes are committed (loom.commit).
   */
  async keep(folder: string, paths?: string[]): Promise<void> {
    const bar = this.bar(folder);
    const sel = bar.select(paths);
    bar.remove(sel.agent, 'agent');
    if (sel.command.length > 0) {
      const unmark = bar.keepingCommands(sel.command);
      const abs = sel.command.map((p) => bar.commandChange(p)?.path ?? p);
      try {
        // The chat shows the commit (loom/commit) with its Undo.
        await this.chat.exec<UndoResult>('loom.commit', { ...this.uri(folder), paths: abs });
        bar.remove(sel.command, 'command');
        setTimeout(unmark, 30_000);
      } catch (e) {
        unmark();
        this.chat.notice('error', `Could not keep ${sel.command.join(', ')}: ${errorText(e)}`, undefined, folder);
      }
    }
    this.draw(folder);
  }

  /**
   * Undo: each agent file loses the agent's hunks (loom.undoFile, the
   * user's edits kept); the commands' changes are discarded (loom.discard).
   * The server says each result in the chat; a refusal stays in the bar.
   */
  async undo(folder: string, paths?: string[]): Promise<void> {
    const bar = this.bar(folder);
    const sel = bar.select(paths);
    for (const p of sel.agent) {
      try {
        // Newest conversation first: its commits may be built on the others'.
        for (const g of bar.undoGroups(p).reverse()) {
          const conv = g.conversation ? { conversation: g.conversation } : {};
          await this.chat.exec<UndoResult>('loom.undoFile', { ...this.uri(folder), ...conv, path: p, commits: g.commits });
        }
        bar.remove([p], 'agent');
      } catch (e) {
        this.chat.notice('error', `Could not undo ${p}: ${errorText(e)}`, undefined, folder);
      }
      this.draw(folder);
    }
    if (sel.command.length > 0) {
      const abs = sel.command.map((p) => bar.commandChange(p)?.path ?? p);
      try {
        await this.chat.exec<UndoResult>('loom.discard', { ...this.uri(folder), paths: abs });
        bar.remove(sel.command, 'command');
      } catch (e) {
        this.chat.notice('error', `Could not discard ${sel.command.join(', ')}: ${errorText(e)}`, undefined, folder);
      }
    }
    this.draw(folder);
  }

  /** Opens VS Code's diff editor: the file before the change ↔ the file now. */
  async openDiff(folder: string, rel: string): Promise<void> {
    const bar = this.bar(folder);
    const top = await this.top(folder);
    const agent = bar.agentFile(rel);
    const base = agent ? `${agent.commits[0]}^` : 'HEAD';
    const before = await textAt(top, base, rel);
    const file = vscode.Uri.file(path.join(top, rel));
    const left = vscode.Uri.from({ scheme: Checkpoints.scheme, path: file.path, query: `before=${base}` });
    this.texts.set(left.toString(), before);
    let right = file;
    if (bar.commandChange(rel)?.deleted) {
      right = vscode.Uri.from({ scheme: Checkpoints.scheme, path: file.path, query: 'deleted' });
      this.texts.set(right.toString(), '');
    }
    const who = agent ? "Loom's changes" : `changed by ${bar.commandChange(rel)?.command ?? 'a command'}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(rel)} (${who})`);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  // --- checkpoints ---------------------------------------------------------------------

  /** Restore checkpoint on prompt itemId: loom.rewind to before its turn. */
  async restore(folder: string, itemId: string, restore: RestoreKind): Promise<void> {
    const t = this.chat.transcript(folder);
    const users = t.items.filter((i): i is Extract<typeof i, { kind: 'user' }> => i.kind === 'user' && !i.queued);
    const index = users.findIndex((u) => u.id === itemId);
    if (index < 0) {
      return;
    }
    const k = this.key(folder);
    this.running.add(k);
    try {
      const cps = await this.chat.exec<CheckpointsResult>('loom.checkpoints', this.uri(folder));
      const cp = matchCheckpoint(cps.checkpoints ?? [], users, index);
      if (!cp) {
        this.chat.notice('error', 'This prompt is no longer a checkpoint of the conversation (it was compacted or rewound); see Loom: Restore Checkpoint… for the list.', undefined, folder);
        return;
      }
      this.expect(k, restore !== 'files');
      let r: RewindResult;
      try {
        r = await this.chat.exec<RewindResult>('loom.rewind', { ...this.uri(folder), turn: cp.turn, restore });
      } catch (e) {
        this.expected.delete(k);
        throw e;
      }
      this.lastRestore.set(k, restore);
      if (restore !== 'conversation') {
        const taken = (cps.checkpoints ?? []).filter((c) => c.turn >= cp.turn).flatMap((c) => c.commits);
        this.bar(folder).undone(taken);
        this.draw(folder);
      }
      if (restore !== 'files') {
        await this.chat.redraw(folder, false);
      }
      this.chat.notice('info', rewindSaid(cp.turn, restore, r), 'redo', folder);
      const last = this.chat.transcript(folder).items.at(-1);
      if (last?.kind === 'notice' && last.action === 'redo') {
        this.redoNotice.set(k, { id: last.id, conversation: this.chat.transcript(folder).conversation });
      }
      if (r.prompt) {
        this.chat.panel.fill(r.prompt);
        this.rewoundPrompt.set(k, r.prompt);
      }
    } catch (e) {
      this.chat.notice('error', `Could not restore the checkpoint: ${errorText(e)}`, undefined, folder);
    } finally {
      this.running.delete(k);
    }
  }

  private expect(k: string, conversation: boolean): void {
    if (conversation) {
      this.expected.set(k, (this.expected.get(k) ?? 0) + 1);
    }
  }

  /** Redo: undoes the last rewind (loom.redo). */
  async redo(folder: string): Promise<void> {
    const k = this.key(folder);
    this.running.add(k);
    try {
      const before = await this.chat.exec<CheckpointsResult>('loom.checkpoints', this.uri(folder)).catch(() => undefined);
      const kind = this.lastRestore.get(k);
      this.expect(k, kind !== undefined && kind !== 'files');
      let r: RewindResult;
      try {
        r = await this.chat.exec<RewindResult>('loom.redo', this.uri(folder));
      } catch (e) {
        this.expected.delete(k);
        throw e;
      }
      this.dropRedo(folder, k);
      this.lastRestore.delete(k);
      // The prompt is in the conversation again: out of the input, unless the user changed it there.
      const prompt = this.rewoundPrompt.get(k);
      this.rewoundPrompt.delete(k);
      if (prompt) {
        this.chat.panel.fill('', prompt);
      }
      if (kind !== 'files') {
        await this.chat.redraw(folder, false);
      }
      const after = await this.chat.exec<CheckpointsResult>('loom.checkpoints', this.uri(folder)).catch(() => undefined);
      // The commits the rewind had taken are the session's again.
      const had = new Set((before?.checkpoints ?? []).flatMap((c) => c.commits));
      const bar = this.bar(folder);
      for (const c of after?.checkpoints ?? []) {
        for (const sha of c.commits.filter((s) => !had.has(s))) {
          bar.commit(sha, c.files);
        }
      }
      this.draw(folder);
      void this.count(folder);
      this.chat.notice('info', redoSaid(r), undefined, folder);
    } catch (e) {
      this.chat.notice('error', `Could not redo: ${errorText(e)}`, undefined, folder);
    } finally {
      this.running.delete(k);
    }
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
