// The chat: one Transcript per workspace folder, fed by the server's
// notifications, drawn by the ChatPanel, and the handlers of what the user
// does in the panel (send, stop, approve, open a diff, undo, …).
import * as path from 'path';
import * as vscode from 'vscode';
import { PendingApprovals } from './approvalcards';
import { ModelChoice } from './modelchoice';
import { explainAskError } from './askargs';
import { beforeText } from './diff';
import { Conversations } from './conversations';
import { writeImages } from './imagefiles';
import { ChatPanel, PanelHost } from './panel';
import { applyPlanStatus } from './planstatus';
import {
  AskArgs, AskResult, Commands, CommitParams, ConversationArgs, DisplayMessageParams, HistoryResult, PanelState, StateParams, Status,
  ToolCallParams, TurnEndedParams, UndoResult,
} from './protocol';
import { KeptConversations, TranscriptStore } from './keptstore';
import { imageLabel, PastedImage } from './shared/images';
import type { BarFile, ContextItem, ConversationEntry, FromWebview, Header, Item, NoticeAction } from './shared/messages';
import type { ReviewIntent } from './shared/review';
import { isBusy } from './status';
import { Transcript } from './transcript';

/** How the chat reaches the server. */
export interface ServerLink {
  /** Runs a loom.* command; rejects with the server's error. */
  exec<T>(command: string, args: object): Promise<T>;
  /** Whether the server is up. */
  running(): boolean;
  /** Whether the server lists command (initialize's executeCommandProvider). */
  has(command: string): boolean;
  /**
   * Whether loom-lsp has started and the panel was drawn from it (its
   * settings sent, every folder's conversation loaded); absent: always.
   */
  ready?(): boolean;
  /** Resolves once ready() holds, or the start failed (exec then says why). */
  whenReady?(): Promise<void>;
}

/** The changed-files bar and the prompts' checkpoints (checkpoints.ts). */
export interface CheckpointHooks {
  handle(msg: FromWebview): Promise<void>;
  files(folder: string): BarFile[];
  /** A prompt was sent in folder. */
  asked(folder: string): void;
  /** A commit was undone from the chat (sha when known). */
  undone(folder: string, sha?: string): void;
}

/** A scheme of read-only documents: the text of a file before an edit. */
export const beforeScheme = 'loom-before';

/** What Escape says while a change waits for review (and does not stop the turn). */
export const escapeKeepsReview = 'A change waits for your review: Escape does not cancel it. Accept or reject it above; Stop cancels the turn (and rejects what waits).';

/** Chat keeps the conversations and answers the panel. */
export class Chat implements PanelHost, vscode.TextDocumentContentProvider {
  readonly panel: ChatPanel;
  /** Every folder's conversations, and which one the panel shows. */
  readonly convs = new Conversations((folder) =>
    this.folders().find((f) => f.path === folder)?.name ?? path.basename(folder));
  private selected: string | undefined;
  /** The approvals that wait for the user (their cards and answers). */
  readonly approvals = new PendingApprovals(this);
  /** The conversation's model and effort: the pickers, the setup card, the model list. */
  readonly models = new ModelChoice(this);
  private readonly befores = new Map<string, string>();
  private readonly onHeader = new vscode.EventEmitter<void>();
  /** The composer's helpers (attach, slash commands, the setup card's model list). */
  composer: ((msg: FromWebview) => Promise<void>) | undefined;
  /** The conversation list's handlers (new, open, rename, delete). */
  conversationList: ((msg: FromWebview) => Promise<void>) | undefined;
  /** The mode selector's and the plan card's handler (planmode.ts). */
  planMode: ((msg: FromWebview) => Promise<void>) | undefined;
  /** The subagent cards' Stop (subagents.ts). */
  subagents: ((msg: FromWebview) => Promise<void>) | undefined;
  /** Where pasted pictures are written for loom.ask (the extension's storage). */
  imageDir: string | undefined;
  /** Folders whose next new conversation (an accepted plan's fresh start) the panel shows, with its first prompt. */
  private readonly following = new Map<string, string>();
  /** Called when a conversation starts or stops running, or gets or loses an open approval (the list's badges). */
  onBusyChange: ((t: Transcript) => void) | undefined;
  /** The changed-files bar and checkpoints. */
  checkpoints: CheckpointHooks | undefined;
  /** The edit card's and the review toggle's handler (reviewpanel.ts). */
  review: ((intent: ReviewIntent) => Promise<void>) | undefined;
  /** Whether edits wait for review, from loom.status (reviewpanel.ts). */
  reviewEdits: ((st: Status) => boolean) | undefined;
  /** Whether a change of this conversation waits for the user's review (reviewpanel.ts). */
  reviewWaiting: ((t: Transcript) => boolean) | undefined;
  /** Called after a folder's conversation was redrawn (its review cards come back). */
  onRedraw: ((folder: string, proposals?: unknown[]) => void) | undefined;
  /** Fires when a header (state, model) changes. */
  readonly onDidChangeHeader = this.onHeader.event;

  /** The records a window reload draws from, and which conversation each folder showed. */
  readonly kept: KeptConversations;

  constructor(extensionUri: vscode.Uri, private readonly server: ServerLink, store?: TranscriptStore) {
    this.panel = new ChatPanel(extensionUri, this);
    this.kept = new KeptConversations(store, (t) => this.convs.isShown(t.folder, t.conversation));
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

  /** The transcript of folder's shown conversation (created on first use). */
  transcript(folder: string): Transcript {
    return this.convs.shown(folder);
  }

  /** Whether the panel shows conversation (of folder): its items may be drawn. */
  shows(folder: string, conversation: string | undefined): boolean {
    return folder === this.current() && this.convs.isShown(folder, conversation);
  }

  /**
   * The transcript a server notification goes to: its conversation's,
   * which may not be the one shown (it then is drawn when shown).
   */
  private route(p: { folder: string; conversation?: string }): Transcript {
    this.follow(p.folder, p.conversation);
    const { transcript, adopted } = this.convs.route(p.folder, p.conversation);
    transcript.updated = new Date().toISOString();
    if (adopted && p.folder === this.current()) {
      this.panel.refresh();
    }
    return transcript;
  }

  /**
   * The transcript a server message goes to: the conversation where
   * names, else the shown one of the folder whose name the message gave.
   */
  transcriptFor(where: { folder?: string; conversation?: string } | undefined, folderName: string | undefined): Transcript | undefined {
    if (where?.folder && where.conversation) {
      return this.route({ folder: where.folder, conversation: where.conversation });
    }
    const f = this.folders().find((x) => x.name === folderName || path.basename(x.path) === folderName);
    const folder = f?.path ?? this.current();
    return folder ? this.transcript(folder) : undefined;
  }

  snapshot(folder: string): { header: Header; items: Item[]; bar?: BarFile[] } {
    const t = this.transcript(folder);
    t.title = this.convs.title(folder, t.conversation);
    return { header: t.header(), items: t.items, bar: this.checkpoints?.files(folder) };
  }

  /** The conversation list of folder, as the header's list draws it. */
  entries(folder: string): ConversationEntry[] {
    return this.convs.entries(folder);
  }

  /** Puts the keyboard in the panel's input. */
  focusInput(): void {
    this.panel.focus();
  }

  /** Whether the server lists command (initialize's executeCommandProvider). */
  has(command: string): boolean {
    return this.server.has(command);
  }

  /** The headers of every conversation with a transcript. */
  headers(): Header[] {
    return this.convs.all().map((t) => t.header());
  }

  /**
   * Shows the next conversation the server starts in folder (a plan
   * accepted in a new conversation), its first prompt drawn as the
   * server sends it to the model.
   */
  followNew(folder: string, prompt: string): void {
    this.following.set(folder, prompt);
  }

  /** Shows conversation when it is the new one followNew waits for (the first unknown id of folder). */
  private follow(folder: string, conversation: string | undefined): void {
    if (!conversation || !this.following.has(folder) || this.convs.find(folder, conversation)) {
      return;
    }
    const prompt = this.following.get(folder) ?? '';
    this.following.delete(folder);
    const t = this.convs.show(folder, conversation).transcript;
    t.loaded = true;
    if (prompt !== '' && t.items.length === 0) {
      t.prompt(prompt);
    }
    this.kept.rememberShown(folder, conversation);
    if (folder === this.current()) {
      this.panel.refresh();
    }
    this.onHeader.fire();
  }

  /** Sends changed items of a folder's conversation (the one shown when absent), and its header, to the panel. */
  show(folder: string, items: readonly (Item | undefined)[], conversation?: string): void {
    this.changed(this.transcriptOf(folder, conversation), items);
  }

  /** The transcript of a folder's conversation; the one shown when conversation is absent. */
  transcriptOf(folder: string, conversation?: string): Transcript {
    this.follow(folder, conversation);
    return conversation ? this.convs.route(folder, conversation).transcript : this.transcript(folder);
  }

  private changed(t: Transcript, items: readonly (Item | undefined)[]): void {
    t.title = this.convs.title(t.folder, t.conversation);
    this.panel.upsert(t.folder, items.filter((i): i is Item => i !== undefined), t.conversation);
    this.panel.header(t.header());
    this.onHeader.fire();
    this.kept.keep(t);
    const badge = `${t.busy()}${t.pendingApproval() !== undefined}`;
    if (this.badges.get(t) !== badge) {
      this.badges.set(t, badge);
      this.onBusyChange?.(t);
    }
  }

  /** Each transcript's running and approval state, as the list last drew it. */
  private readonly badges = new WeakMap<Transcript, string>();

  /** Writes every conversation's record now (the window is closing or reloading). */
  async flush(): Promise<void> {
    await this.kept.flush(this.convs.all());
  }

  /**
   * Draws each folder's conversation kept across the window reload
   * (the one shown last) at once, before loom-lsp has started: its
   * loom.panelState then redraws it from the server's history.
   */
  drawKept(): void {
    for (const f of this.folders()) {
      const id = this.kept.rememberedShown(f.path);
      const saved = id ? this.kept.recordOf(f.path, id) : undefined;
      if (!id || !saved || this.convs.find(f.path, id)) {
        continue;
      }
      const t = this.convs.show(f.path, id).transcript;
      if (!t.preview(saved)) {
        continue;
      }
      t.title = this.convs.title(f.path, id);
    }
    this.panel.refresh();
  }

  // --- server notifications ---------------------------------------------------

  delta(p: DisplayMessageParams): void {
    const t = this.route(p);
    const { changed } = t.delta(p);
    this.changed(t, changed);
  }

  tool(p: ToolCallParams): void {
    const t = this.route(p);
    this.changed(t, t.tool(p));
  }

  state(p: StateParams): void {
    const t = this.route(p);
    this.changed(t, t.setState(p.state, p.turn));
    if (p.state === 'WaitingForUserInput' && t.takeGap()) {
      void this.redraw(p.folder, false, t);
    }
  }

  turnEnded(p: TurnEndedParams): void {
    const t = this.route(p);
    const u = p.usage;
    const usage = u ? { prompt: u.prompt_tokens, completion: u.completion_tokens, total: u.total_tokens } : undefined;
    this.changed(t, t.turnEnded(p.turn, p.outcome, usage));
    void this.fillToolResults(t);
    this.approvals.turnEnded(t);
  }

  commit(p: CommitParams): void {
    const t = this.route(p);
    this.changed(t, [t.commit(p.turn, p.sha, p.message)]);
  }

  /**
   * A window/showMessage of the server ("Loom (name): text"): errors and
   * retries go into their conversation (from: params.loom), else the one
   * shown. Returns false for a message that is not the chat's.
   */
  serverMessage(type: 'error' | 'warning' | 'info', message: string, from?: { folder?: string; conversation?: string }): boolean {
    const m = /^Loom \(([^)]*)\): ([\s\S]*)$/.exec(message);
    if (!m) {
      return false;
    }
    // The conversation it comes from, when the server says it (not always the one shown).
    const t = this.transcriptFor(from, m[1]);
    if (!t) {
      return false;
    }
    const e = type === 'error' ? explainAskError(m[2]) : { text: m[2] };
    this.changed(t, [t.notice(type, e.text, e.action)]);
    return true;
  }

  /**
   * Says something in the current folder's conversation (the shown one,
   * or, with conversation, that one).
   */
  notice(level: 'error' | 'warning' | 'info', text: string, action?: NoticeAction, folder = this.current(), conversation?: string): void {
    if (!folder) {
      return;
    }
    const t = conversation ? this.route({ folder, conversation }) : this.transcript(folder);
    this.changed(t, [t.notice(level, text, action)]);
  }

  /** Marks every transcript's server as down (or up again). */
  setDown(down: boolean): void {
    for (const f of this.folders()) {
      this.transcript(f.path);
    }
    for (const t of this.convs.all()) {
      t.down = down;
      this.panel.header(t.header());
    }
    this.onHeader.fire();
  }

  // --- commands ------------------------------------------------------------------

  /**
   * Sends a prompt (with the code action's uri and selection, if any, and
   * the composer's attachments as loom.ask's context).
   */
  async ask(args: AskArgs, context?: string, attached: readonly ContextItem[] = [], images: readonly PastedImage[] = []): Promise<AskResult | undefined> {
    const folder = this.folderOf(args.uri) ?? this.current();
    if (!folder) {
      void vscode.window.showErrorMessage('Loom: open a folder first; Loom works on a workspace folder.');
      return undefined;
    }
    if (folder !== this.current()) {
      this.selected = folder;
      this.panel.refresh();
    }
    let t = this.transcript(folder);
    this.checkpoints?.asked(folder);
    // Typed while loom-lsp starts (right after a window reload): the
    // prompt waits, drawn as queued, until the server is up and the panel
    // drawn from it, so that neither the settings (its model) nor the
    // redraw can overtake it (issue 47 item 1).
    const early = this.server.ready?.() === false;
    const item = t.prompt(args.prompt, context, [...attached.map((c) => c.label), ...images.map(imageLabel)], early);
    this.changed(t, [item]);
    if (early) {
      await this.server.whenReady?.();
      // The redraw keeps the prompt in its transcript's queue; the transcript shown may be another now.
      t = this.transcriptHolding(folder, item) ?? t;
    }
    let written: { paths: string[]; remove: () => Promise<void> } | undefined;
    if (!args.uri) {
      args = { ...args, uri: vscode.Uri.file(folder).toString() };
    }
    if (t.conversation !== '' && !args.conversation) {
      args = { ...args, conversation: t.conversation };
    }
    if (attached.length > 0) {
      args = { ...args, context: [...attached] };
    }
    try {
      if (images.length > 0) {
        // loom.ask takes pictures as files: written for it, removed once it has read them.
        written = await writeImages(this.imageDir ?? '', images);
        args = { ...args, images: written.paths };
      }
      const res = await this.server.exec<AskResult>(Commands.ask, args);
      if (res.conversation && this.convs.adopt(folder, res.conversation)) {
        this.panel.refresh();
      }
      this.changed(t, t.asked(item, res.turn));
      this.onBusyChange?.(t);
      return res;
    } catch (e) {
      const { text, action } = explainAskError(errorText(e));
      if (action === 'openSettings') {
        // No model yet: the panel's setup card asks for one (no toast
        // to outlive the fix); the prompt comes back once it is set.
        t.setup = true;
        this.models.unsent(folder, args.prompt);
        this.changed(t, [...t.failed(item), t.notice('info', 'No model is set up yet: choose one in the card below, then send again.', 'setup')]);
        return undefined;
      }
      this.changed(t, [...t.failed(item), t.notice('error', text, action)]);
      return undefined;
    } finally {
      await written?.remove();
    }
  }

  /** The transcript of folder that holds item (the shown one first). */
  private transcriptHolding(folder: string, item: Item): Transcript | undefined {
    const shown = this.transcript(folder);
    return shown.get(item.id) === item ? shown : this.convs.all().find((x) => x.folder === folder && x.get(item.id) === item);
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

  private folderArgs(folder = this.current()): ConversationArgs {
    return folder ? argsOf(this.transcript(folder)) : {};
  }

  /**
   * The arguments that select the shown conversation of the current
   * folder (uri and conversation): every request the panel makes
   * carries them.
   */
  conversationArgs(): ConversationArgs {
    return this.folderArgs();
  }

  /** The arguments that select t's conversation. */
  argsFor(t: Transcript): ConversationArgs {
    return argsOf(t);
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
      this.kept.keep(t);
      this.panel.refresh();
    }
  }

  /** Undoes commit sha (loom.undo {sha}); the newest when absent. */
  async undo(sha?: string): Promise<void> {
    const folder = this.current();
    if (!folder) {
      return;
    }
    const t = this.transcript(folder);
    let r: UndoResult | undefined;
    try {
      r = await this.server.exec<UndoResult>(Commands.undo, { ...this.folderArgs(folder), ...(sha ? { sha } : {}) });
    } catch (e) {
      this.notice('error', errorText(e), undefined, folder);
      return;
    }
    if (r) {
      const item = t.undone(r.message, sha) ?? t.notice('info', r.message);
      this.changed(t, [item]);
      this.checkpoints?.undone(folder, item?.kind === 'commit' ? item.sha : sha);
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
  private async run<T>(cmd: string): Promise<T | null | undefined> {
    try {
      return (await this.server.exec<T>(cmd, this.folderArgs())) ?? null;
    } catch (e) {
      this.notice('error', errorText(e));
      return undefined;
    }
  }

  /**
   * Redraws a folder's conversation and its header (loom.status). With
   * keep, the conversation as drawn before (in memory, else kept across
   * the window reload) is drawn again when loom.history says it is still
   * the server's: diffs, commits with their Undo, notices and stop marks
   * stay. Else, or without keep, from loom.history alone.
   */
  async redraw(folder: string, keep = true, t = this.transcript(folder)): Promise<void> {
    try {
      if (t.conversation === '') {
        // The folder's most recent conversation is the one shown.
        const st = await this.server.exec<Status>(Commands.status, argsOf(t));
        if (st?.conversationId && this.convs.adopt(folder, st.conversationId)) {
          t = this.convs.shown(folder);
        }
      }
      const [h, st] = await Promise.all([
        this.server.exec<HistoryResult>(Commands.history, argsOf(t)),
        this.server.exec<Status>(Commands.status, argsOf(t)),
      ]);
      await this.drawFrom(t, h, st, keep);
    } catch (e) {
      t.notice('error', 'Could not load the conversation: ' + errorText(e));
    }
    this.redrawn(folder, t);
  }

  /**
   * Draws a folder's conversation from a loom.panelState reply (the
   * window's first drawing: one request for everything); the proposals
   * go to the review.
   */
  async redrawFromState(folder: string, ps: PanelState): Promise<void> {
    let t = this.transcript(folder);
    try {
      await this.drawFrom(t, ps.history, ps.status, true);
    } catch (e) {
      t.notice('error', 'Could not load the conversation: ' + errorText(e));
    }
    t = this.transcript(folder);
    this.redrawn(folder, t, ps.proposals);
  }

  /** Draws t from its history and status, keeping what was drawn (keep) when the history is still the server's. */
  private async drawFrom(t: Transcript, h: HistoryResult, st: Status, keep: boolean): Promise<void> {
    // What is drawn now, unless it has no prompt yet (just after a
    // reload, only the server's first notices): then what was kept.
    const drawn = t.saved();
    // Drawn from the record at activation: the record decides (what came meanwhile, such as "resumed", is not kept).
    const before = !t.previewed && drawn.items.some((i) => i.kind === 'user') ? drawn : this.kept.record(t);
    t.previewed = false;
    // A turn the server still runs (a review it took up again after the reload) is not marked as cut.
    if (!(keep && t.restore(before, h, isBusy(st?.state ?? '')))) {
      t.redraw(h);
    }
    await this.applyStatus(t, st);
    this.kept.keep(t);
  }

  private redrawn(folder: string, t: Transcript, proposals?: unknown[]): void {
    if (this.shows(folder, t.conversation)) {
      this.panel.refresh();
    }
    this.onHeader.fire();
    this.onRedraw?.(folder, proposals);
  }

  /** Puts the tools' whole results (from loom.history) into their cards. */
  private async fillToolResults(t: Transcript): Promise<void> {
    try {
      const h = await this.server.exec<HistoryResult>(Commands.history, argsOf(t));
      this.changed(t, t.toolResults(h));
    } catch { /* the cards keep their summaries */ }
  }

  /** Refreshes every folder's model and state from loom.status. */
  async refreshStatus(): Promise<void> {
    await Promise.all(this.folders().map(async (f) => {
      try {
        const t = this.transcript(f.path);
        const st = await this.server.exec<Status>(Commands.status, argsOf(t));
        const cards = await this.applyStatus(t, st);
        if (cards.length > 0) {
          this.changed(t, cards);
        } else {
          this.panel.header(t.header());
        }
      } catch { /* said elsewhere */ }
    }));
    this.onHeader.fire();
  }

  private async applyStatus(t: Transcript, st: Status): Promise<Item[]> {
    const cards = applyPlanStatus(t, st, this.server.has(Commands.setMode), this.server.has(Commands.setEffort));
    t.model = st.model;
    t.setState(st.state);
    t.reviewEdits = this.reviewEdits?.(st) ?? st.edits === 'review';
    await this.models.apply(t, st);
    return cards;
  }

  // --- the panel's messages ----------------------------------------------------

  async handle(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'send':
        await this.ask({ prompt: msg.text }, undefined, msg.context ?? [], msg.images ?? []);
        break;
      case 'stop':
        if (msg.by === 'escape' && this.reviewWaiting?.(this.transcript(this.current() ?? ''))) {
          // Escape stops the model, not a review: the proposals stay, to be decided (Stop cancels the turn).
          this.notice('info', escapeKeepsReview);
          break;
        }
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
        await this.approvals.answer(msg.id, msg.answer, msg.prefix);
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
      case 'bar':
      case 'restore':
        await this.checkpoints?.handle(msg);
        break;
      case 'review':
        await this.review?.(msg.intent);
        break;
      case 'action':
        if (msg.action === 'redo') {
          await this.checkpoints?.handle(msg);
        } else if (msg.action === 'setup') {
          this.panel.refresh();
        } else {
          await vscode.commands.executeCommand(msg.action === 'openSettings' ? 'loom.openSettings' : 'loom.installServer');
        }
        break;
      case 'setModel':
        await this.models.setModel(msg.model);
        break;
      case 'setEffort':
        await this.models.setEffort(msg.effort);
        break;
      case 'setup':
        await this.models.setup(msg.choice);
        break;
      case 'attach':
      case 'slash':
      case 'listModels':
        await this.composer?.(msg);
        break;
      case 'newConversation':
      case 'openConversation':
      case 'renameConversation':
      case 'deleteConversation':
      case 'listConversations':
        await this.conversationList?.(msg);
        break;
      case 'setMode':
      case 'decidePlan':
        await this.planMode?.(msg);
        break;
      case 'stopSubagent':
        await this.subagents?.(msg);
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

/** The arguments that select t's folder and conversation. */
export function argsOf(t: Transcript): ConversationArgs {
  return { uri: vscode.Uri.file(t.folder).toString(), ...(t.conversation ? { conversation: t.conversation } : {}) };
}

/** Opens the Settings editor on Loom's settings. */
export function openSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', 'loom.');
}

/** The message of an error, as the server said it (no prefix added). */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
