// The chat: one Transcript per workspace folder, fed by the server's
// notifications, drawn by the ChatPanel, and the handlers of what the user
// does in the panel (send, stop, approve, open a diff, undo, …).
import * as path from 'path';
import * as vscode from 'vscode';
import { AlwaysRule, alwaysWords, parseApproval } from './approval';
import { explainAskError } from './askargs';
import { beforeText } from './diff';
import { ChatPanel, PanelHost } from './panel';
import {
  AskArgs, AskResult, Commands, CommitParams, DisplayMessageParams, HistoryResult, StateParams, Status,
  ToolCallParams, TurnEndedParams, UndoResult,
} from './protocol';
import type { FromWebview, Header, Item, NoticeAction } from './shared/messages';
import { Transcript } from './transcript';

/** How the chat reaches the server. */
export interface ServerLink {
  /** Runs a loom.* command; rejects with the server's error. */
  exec<T>(command: string, args: object): Promise<T>;
  /** Whether the server is up. */
  running(): boolean;
}

/** The answer to an approval, from the card or the notification. */
export type ApprovalAnswer = 'allow' | 'deny' | 'always';

/** A scheme of read-only documents: the text of a file before an edit. */
export const beforeScheme = 'loom-before';

/** Chat keeps the conversations and answers the panel. */
export class Chat implements PanelHost, vscode.TextDocumentContentProvider {
  readonly panel: ChatPanel;
  private readonly transcripts = new Map<string, Transcript>();
  private selected: string | undefined;
  private readonly approvals = new Map<string, { folder: string; resolve: (a: ApprovalAnswer) => void; always?: AlwaysRule }>();
  private approvalSeq = 0;
  private readonly befores = new Map<string, string>();
  private readonly onHeader = new vscode.EventEmitter<void>();
  /** Fires when a header (state, model) changes. */
  readonly onDidChangeHeader = this.onHeader.event;

  constructor(extensionUri: vscode.Uri, private readonly server: ServerLink) {
    this.panel = new ChatPanel(extensionUri, this);
  }

  /** Runs a loom.* command on the server. */
  exec<T>(command: string, args: object): Promise<T> {
    return this.server.exec<T>(command, args);
  }

  // --- folders ---------------------------------------------------------------

  folders(): { path: string; name: string }[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ path: f.uri.fsPath, name: f.name }));
  }

  current(): string | undefined {
    const all = this.folders();
    if (this.selected && all.some((f) => f.path === this.selected)) {
      return this.selected;
    }
    const ed = vscode.window.activeTextEditor;
    const f = ed ? vscode.workspace.getWorkspaceFolder(ed.document.uri) : undefined;
    return f?.uri.fsPath ?? all[0]?.path;
  }

  /** The transcript of folder (created on first use). */
  transcript(folder: string): Transcript {
    let t = this.transcripts.get(folder);
    if (!t) {
      const name = this.folders().find((f) => f.path === folder)?.name ?? path.basename(folder);
      t = new Transcript(folder, name);
      this.transcripts.set(folder, t);
    }
    return t;
  }

  /** The transcript of the folder whose name a server message gave. */
  private byName(name: string | undefined): Transcript | undefined {
    const f = this.folders().find((x) => x.name === name || path.basename(x.path) === name);
    const folder = f?.path ?? this.current();
    return folder ? this.transcript(folder) : undefined;
  }

  snapshot(folder: string): { header: Header; items: Item[] } {
    const t = this.transcript(folder);
    return { header: t.header(), items: t.items };
  }

  /** The headers of every folder with a transcript. */
  headers(): Header[] {
    return [...this.transcripts.values()].map((t) => t.header());
  }

  private changed(t: Transcript, items: readonly (Item | undefined)[]): void {
    this.panel.upsert(t.folder, items.filter((i): i is Item => i !== undefined));
    this.panel.header(t.header());
    this.onHeader.fire();
  }

  // --- server notifications ---------------------------------------------------

  delta(p: DisplayMessageParams): void {
    const t = this.transcript(p.folder);
    const { changed } = t.delta(p);
    this.changed(t, changed);
  }

  tool(p: ToolCallParams): void {
    const t = this.transcript(p.folder);
    this.changed(t, t.tool(p));
  }

  state(p: StateParams): void {
    const t = this.transcript(p.folder);
    this.changed(t, t.setState(p.state, p.turn));
    if (p.state === 'WaitingForUserInput' && t.takeGap()) {
      void this.redraw(p.folder);
    }
  }

  turnEnded(p: TurnEndedParams): void {
    const t = this.transcript(p.folder);
    const u = p.usage;
    const usage = u ? { prompt: u.prompt_tokens, completion: u.completion_tokens, total: u.total_tokens } : undefined;
    this.changed(t, t.turnEnded(p.turn, p.outcome, usage));
    void this.fillToolResults(p.folder);
    for (const [id, a] of this.approvals) {
      if (a.folder === p.folder) {
        a.resolve('deny');
        this.approvals.delete(id);
      }
    }
  }

  commit(p: CommitParams): void {
    const t = this.transcript(p.folder);
    this.changed(t, [t.commit(p.turn, p.sha, p.message)]);
  }

  /**
   * A window/showMessage of the server ("Loom (name): text"): errors and
   * retries go into the conversation. Returns false for a message that is
   * not the chat's.
   */
  serverMessage(type: 'error' | 'warning' | 'info', message: string): boolean {
    const m = /^Loom \(([^)]*)\): ([\s\S]*)$/.exec(message);
    if (!m) {
      return false;
    }
    const t = this.byName(m[1]);
    if (!t) {
      return false;
    }
    const e = type === 'error' ? explainAskError(m[2]) : { text: m[2] };
    this.changed(t, [t.notice(type, e.text, e.action)]);
    return true;
  }

  /** Says something in the current folder's conversation. */
  notice(level: 'error' | 'warning' | 'info', text: string, action?: NoticeAction, folder = this.current()): void {
    if (!folder) {
      return;
    }
    const t = this.transcript(folder);
    this.changed(t, [t.notice(level, text, action)]);
  }

  /** Marks every transcript's server as down (or up again). */
  setDown(down: boolean): void {
    for (const f of this.folders()) {
      const t = this.transcript(f.path);
      t.down = down;
      this.panel.header(t.header());
    }
    this.onHeader.fire();
  }

  /**
   * An approval request ("Loom (name) wants to run bash:\n<command>"), shown
   * in its tool card. Resolves with the first answer, from the card or
   * from answer() (the notification); undefined if it is not an approval.
   */
  approval(message: string): { id: string; answer: Promise<ApprovalAnswer>; always?: AlwaysRule } | undefined {
    const req = parseApproval(message);
    const t = req ? this.byName(req.folderName) : undefined;
    if (!req || !t) {
      return undefined;
    }
    const id = `approval-${++this.approvalSeq}`;
    const card = t.approval(id, req.tool, req.detail, req.always ? alwaysWords(req.always) : undefined);
    this.changed(t, [card]);
    const answer = new Promise<ApprovalAnswer>((resolve) => {
      this.approvals.set(id, { folder: t.folder, resolve, always: req.always });
    });
    return { id, answer, always: req.always };
  }

  /**
   * Answers approval id (the first answer wins; later ones are ignored).
   * "always" first writes the setting that allows this kind of call in
   * the workspace's settings, then answers the pending call as allowed.
   */
  async answer(id: string, a: ApprovalAnswer): Promise<void> {
    const p = this.approvals.get(id);
    if (!p) {
      return;
    }
    this.approvals.delete(id);
    if (a === 'always') {
      if (p.always) {
        await rememberAlways(p.always).catch((e) =>
          this.notice('error', `Could not save "always allow" in the workspace settings: ${errorText(e)}`, undefined, p.folder));
      } else {
        a = 'allow';
      }
    }
    const t = this.transcript(p.folder);
    this.changed(t, [t.answered(id, a !== 'deny')]);
    p.resolve(a);
  }

  // --- commands ------------------------------------------------------------------

  /** Sends a prompt (with the code action's uri and selection, if any). */
  async ask(args: AskArgs, context?: string): Promise<AskResult | undefined> {
    const folder = this.folderOf(args.uri) ?? this.current();
    if (!folder) {
      void vscode.window.showErrorMessage('Loom: open a folder first; Loom works on a workspace folder.');
      return undefined;
    }
    if (folder !== this.current()) {
      this.selected = folder;
      this.panel.refresh();
    }
    const t = this.transcript(folder);
    const item = t.prompt(args.prompt, context);
    this.changed(t, [item]);
    if (!args.uri) {
      args = { ...args, uri: vscode.Uri.file(folder).toString() };
    }
    try {
      const res = await this.server.exec<AskResult>(Commands.ask, args);
      this.changed(t, t.asked(item, res.turn));
      return res;
    } catch (e) {
      const { text, action } = explainAskError(errorText(e));
      this.changed(t, [t.notice('error', text, action)]);
      if (action === 'openSettings') {
        void vscode.window.showErrorMessage('Loom: no model configured. Set loom.model.* in Settings.', 'Open Settings')
          .then((b) => b && openSettings());
      }
      return undefined;
    }
  }

  private folderOf(uri: string | undefined): string | undefined {
    if (!uri) {
      return undefined;
    }
    try {
      return vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(uri, true))?.uri.fsPath;
    } catch {
      return undefined;
    }
  }

  private folderArgs(folder = this.current()): { uri?: string } {
    return folder ? { uri: vscode.Uri.file(folder).toString() } : {};
  }

  async cancel(): Promise<void> {
    await this.run(Commands.cancel);
  }

  async reset(): Promise<void> {
    const folder = this.current();
    if (folder && (await this.run(Commands.reset)) !== undefined) {
      const t = this.transcript(folder);
      t.redraw({ folder, messages: [] });
      t.usage = undefined;
      this.panel.refresh();
    }
  }

  /** Takes back the commit sha (loom.undo {sha}), or the newest. */
  async undo(sha?: string): Promise<void> {
    const folder = this.current();
    const r = await this.run<UndoResult>(Commands.undo, sha ? { sha } : {});
    if (folder && r) {
      const t = this.transcript(folder);
      const item = t.undone(r.message, sha) ?? t.notice('info', r.message);
      this.changed(t, [item]);
    }
  }

  /**
   * Compacts the conversation now (loom.compact). The server's loom/notice
   * messages say in the conversation when it starts and ends.
   */
  async compact(): Promise<void> {
    await this.run(Commands.compact);
  }

  /** Runs a folder command; says a failure in the conversation. */
  private async run<T>(cmd: string, extra: object = {}): Promise<T | null | undefined> {
    try {
      return (await this.server.exec<T>(cmd, { ...this.folderArgs(), ...extra })) ?? null;
    } catch (e) {
      this.notice('error', errorText(e));
      return undefined;
    }
  }

  /** Redraws a folder's conversation from loom.history, and its header from loom.status. */
  async redraw(folder: string): Promise<void> {
    const t = this.transcript(folder);
    try {
      const [h, st] = await Promise.all([
        this.server.exec<HistoryResult>(Commands.history, this.folderArgs(folder)),
        this.server.exec<Status>(Commands.status, this.folderArgs(folder)),
      ]);
      t.redraw(h);
      this.applyStatus(t, st);
    } catch (e) {
      t.notice('error', 'Could not load the conversation: ' + errorText(e));
    }
    if (folder === this.current()) {
      this.panel.refresh();
    }
    this.onHeader.fire();
  }

  /** Puts the tools' whole results (from loom.history) into their cards. */
  private async fillToolResults(folder: string): Promise<void> {
    try {
      const h = await this.server.exec<HistoryResult>(Commands.history, this.folderArgs(folder));
      const t = this.transcript(folder);
      this.changed(t, t.toolResults(h));
    } catch { /* the cards keep their summaries */ }
  }

  /** Refreshes every folder's model and state from loom.status. */
  async refreshStatus(): Promise<void> {
    await Promise.all(this.folders().map(async (f) => {
      try {
        const st = await this.server.exec<Status>(Commands.status, this.folderArgs(f.path));
        const t = this.transcript(f.path);
        this.applyStatus(t, st);
        this.panel.header(t.header());
      } catch { /* said elsewhere */ }
    }));
    this.onHeader.fire();
  }

  private applyStatus(t: Transcript, st: Status): void {
    t.model = st.model;
    t.setState(st.state);
  }

  // --- the panel's messages ----------------------------------------------------

  async handle(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'send':
        await this.ask({ prompt: msg.text });
        break;
      case 'stop':
        await this.cancel();
        break;
      case 'reset':
        await this.reset();
        break;
      case 'pickFolder':
        this.selected = msg.folder;
        this.panel.refresh();
        this.onHeader.fire();
        break;
      case 'approve':
        await this.answer(msg.id, msg.answer);
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(msg.text);
        break;
      case 'insert': {
        const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
        if (!ed) {
          void vscode.window.showInformationMessage('Loom: open an editor to insert the code into.');
          break;
        }
        await ed.edit((b) => {
          for (const s of ed.selections) {
            b.replace(s, msg.text);
          }
        });
        break;
      }
      case 'openDiff':
        await this.openDiff(msg.itemId);
        break;
      case 'openFile': {
        const folder = this.current();
        if (folder) {
          await vscode.window.showTextDocument(vscode.Uri.file(path.resolve(folder, msg.path)), { preview: true });
        }
        break;
      }
      case 'undo':
        await this.undo(msg.sha);
        break;
      case 'action':
        await vscode.commands.executeCommand(msg.action === 'openSettings' ? 'loom.openSettings' : 'loom.installServer');
        break;
      case 'ready':
        break;
    }
  }

  /** Opens VS Code's diff editor on an edit card: before ↔ the file now. */
  private async openDiff(itemId: string): Promise<void> {
    const folder = this.current();
    const it = folder ? this.transcript(folder).get(itemId) : undefined;
    if (!folder || it?.kind !== 'tool' || !it.diff || !it.path) {
      return;
    }
    const file = vscode.Uri.file(path.resolve(folder, it.path));
    const doc = await vscode.workspace.openTextDocument(file);
    const before = beforeText(doc.getText(), it.diff);
    if (before === undefined) {
      // The file changed since: show the diff itself.
      const d = await vscode.workspace.openTextDocument({ content: it.diff, language: 'diff' });
      await vscode.window.showTextDocument(d, { preview: true });
      return;
    }
    const left = vscode.Uri.from({ scheme: beforeScheme, path: file.path, query: itemId });
    this.befores.set(left.toString(), before);
    await vscode.commands.executeCommand('vscode.diff', left, file, `${path.basename(file.fsPath)} (Loom's edit)`);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.befores.get(uri.toString()) ?? '';
  }
}

/** Writes the workspace setting that allows this kind of call from now on. */
async function rememberAlways(rule: AlwaysRule): Promise<void> {
  const loom = vscode.workspace.getConfiguration('loom');
  if (rule.kind === 'bash') {
    await loom.update('tools.bash', 'allow', vscode.ConfigurationTarget.Workspace);
    return;
  }
  const key = 'mcp.approve';
  const current = loom.inspect<Record<string, string>>(key)?.workspaceValue ?? {};
  await loom.update(key, { ...current, [rule.server]: 'allow' }, vscode.ConfigurationTarget.Workspace);
}

/** Opens the Settings editor on Loom's settings. */
export function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', 'loom.');
}

/** The message of an error, as the server said it (no prefix added). */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
