// The VS Code client of loom-lsp: starts the server over stdio, declares
// experimental.loom, draws the conversation in the chat panel, shows the
// state in the status bar and saves documents before the agent's
// auto-commit.
import { manageRules } from './rules';
import * as vscode from 'vscode';
import type {
  ConfigurationParams, HandlerResult, LanguageClient, LanguageClientOptions, MessageActionItem, MessageType, ResponseError, ServerOptions,
} from 'vscode-languageclient/node';
import { ActionItem, answerTitle, ruleAnswer } from './approval';
import { parseAskArgument } from './askargs';
import type { ApprovalReply } from './approvalcards';
import { beforeScheme, Chat, errorText, openSettings } from './chat';
import { Checkpoints, commandChangesMethod } from './checkpoints';
import type { CommandChangeWire } from './filesbar';
import type { CommandChangesParams } from './filesbar';
import { Composer } from './composer';
import { ConversationList } from './conversationlist';
import { LoomFeature } from './feature';
import { findExecutable } from './findbin';
import { ChatPanel } from './panel';
import { PlanMode } from './planmode';
import { Subagents } from './subagents';
import type { SubagentParams } from './wire.gen';
import {
  AskArgs, CommitParams, HookParams, NoticeParams, DisplayMessageParams, Methods, ModeParams, PlanParams, PlanProposalParams, SaveDocumentsParams, ElicitParams, ElicitResult,
  SaveDocumentsResult, StateParams, Status, ToolCallParams, TurnEndedParams,
} from './protocol';
import { saveDocuments } from './save';
import { elicit, vscodeElicitUI } from './elicitui';
import { answerDiagnostics, DiagnosticsParams, LspDiagnostic } from './diagnostics';
import { ReviewController } from './review';
import { EditReview, reviewEditsInForce, setReviewEdits } from './reviewpanel';
import { inlineAcceptedCommand, inlineEnabledKey, InlineSwitch, modelWords, toggleInlineCommand } from './inline';
import { InlineCompletionFeature } from './inlinefeature';
import { ProposedChangesParams, ReviewMethods, RewoundParams } from './reviewwire';
import { LoomSettings, toServerConfig, trustLayer } from './settings';
import { stateWords } from './status';
import { answerConfiguration, SettingsScope, trustFolderCommand } from './trust';

let client: LanguageClient | undefined;
/** vscode-languageclient (dist/client.js), loaded by connect() after activation. */
let lsp: typeof import('./client');
/** loom-lsp's start, while it runs and after: what the panel asks meanwhile waits for it. */
let serverUp: Promise<void> | undefined;
/**
 * Whether the panel was drawn from loom-lsp (afterStart done, or the
 * start failed); prompts typed before wait for it (panelReady).
 */
let panelUp = false;
let markPanelUp: () => void = () => undefined;
const panelReady = new Promise<void>((resolve) => {
  markPanelUp = () => {
    panelUp = true;
    resolve();
  };
});
/** Set by deactivate: a start not begun yet does not begin. */
let deactivated = false;
/** The chat, whose conversations are written down at deactivation. */
let theChat: Chat | undefined;
/** The review, whose drafts (decisions so far, the comment typed) go to the server at deactivation. */
let theReview: EditReview | undefined;

/** The module path of loom-lsp's command, for go install. */
const installCommand = 'go install github.com/loom-lsp/loom-lsp/cmd/loom-lsp@latest';

/**
 * The loom settings: all of them (as VS Code merges them), the user's own
 * (user settings, which no repository fills), or the workspace's
 * (.vscode/settings.json, which a repository may fill).
 */
function settings(scope: SettingsScope = 'all'): LoomSettings {
  const c = vscode.workspace.getConfiguration('loom');
  const get = <T>(key: string): T | undefined => {
    if (scope === 'all') {
      return c.get<T>(key);
    }
    const i = c.inspect<T>(key);
    return scope === 'user' ? i?.globalValue : i?.workspaceFolderValue ?? i?.workspaceValue;
  };
  return {
    model: {
      provider: get<string>('model.provider'),
      baseUrl: get<string>('model.baseUrl'),
      name: get<string>('model.name'),
      apiKeyEnv: get<string>('model.apiKeyEnv'),
    },
    tools: { bash: get<string>('tools.bash'), edits: get<string>('tools.edits') },
    mcp: { approve: get<Record<string, unknown>>('mcp.approve') },
    completion: {
      api: get<string>('completion.api'),
      baseUrl: get<string>('completion.baseUrl'),
      model: get<string>('completion.model'),
      apiKeyEnv: get<string>('completion.apiKeyEnv'),
    },
  };
}

/**
 * The settings layer sent with workspace/didChangeConfiguration. It
 * replaces the previous one on the server, so a cleared setting is
 * dropped there too; initializationOptions carry nothing that a setting
 * could later clear but the workspace's trust, which this layer repeats.
 */
function serverSettings(scope: SettingsScope = 'all'): object {
  return toServerConfig(settings(scope));
}

/** Answers workspace/configuration: loom-lsp's section from our settings. */
async function pullConfiguration(params: ConfigurationParams, token: vscode.CancellationToken,
  next: (p: ConfigurationParams, t: vscode.CancellationToken) => HandlerResult<unknown[], void>): Promise<unknown[] | ResponseError<void>> {
  const theirs = await next(params, token);
  if (theirs instanceof lsp.ResponseError) {
    return theirs;
  }
  return answerConfiguration(params.items, theirs, serverSettings);
}

/** Inline completion: the client's feature, the status bar's switch and its commands. */
interface InlineCompletion {
  feature: InlineCompletionFeature;
  /** Asks loom.status for the completion model again (the settings changed). */
  refresh(): void;
}

/**
 * Inline completion from loom-lsp's completion model: the provider (a
 * feature of the language client, registered while the server serves
 * it), a status item that says which model and turns it on and off
 * (kept across sessions), and the accept command the items run (loom's
 * local completion.log).
 */
function inlineCompletion(context: vscode.ExtensionContext, chat: Chat, client: () => LanguageClient | undefined): InlineCompletion {
  const sw = new InlineSwitch(context.globalState.get<boolean>(inlineEnabledKey, true));
  const item = vscode.window.createStatusBarItem('loom.inlineCompletion', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Loom Inline Completion';
  item.command = toggleInlineCommand;
  context.subscriptions.push(item);
  const draw = () => {
    const v = sw.view();
    item.text = v.text;
    item.tooltip = v.tooltip;
    if (v.visible) {
      item.show();
    } else {
      item.hide();
    }
  };
  let asked = 0;
  const refresh = () => {
    if (!sw.served) {
      draw();
      return;
    }
    const n = ++asked;
    chat.exec<Status>('loom.status', chat.conversationArgs()).then((st) => {
      if (n === asked) {
        sw.model = st.completion;
        draw();
      }
    }, () => draw());
  };
  let said = '';
  const feature = new InlineCompletionFeature({
    client,
    sw,
    changed: refresh,
    failed: (e) => {
      // Once per distinct error, in the output (it may fail at every keystroke).
      const msg = errorText(e);
      if (msg !== said) {
        said = msg;
        client()?.outputChannel.appendLine(`[Warn] inline completion: ${msg}`);
      }
    },
  });
  context.subscriptions.push(
    vscode.commands.registerCommand(toggleInlineCommand, async () => {
      const on = sw.toggle();
      await context.globalState.update(inlineEnabledKey, on);
      draw();
      void vscode.window.setStatusBarMessage(`Loom: inline completion ${on ? 'on' : 'off'} (${modelWords(sw.model)})`, 3000);
    }),
    // The server's command on an accepted item: a line in loom's own completion.log.
    vscode.commands.registerCommand(inlineAcceptedCommand, (arg?: unknown) =>
      chat.exec(inlineAcceptedCommand, typeof arg === 'object' && arg !== null ? arg : {}).catch(() => undefined)),
  );
  return { feature, refresh };
}

/** Runs loom.trust on a folder; says so when asked to. */
async function trustFolder(lc: LanguageClient, uri: string, say: boolean): Promise<void> {
  try {
    const res = await lc.sendRequest(lsp.ExecuteCommandRequest.type, { command: 'loom.trust', arguments: [{ uri }] }) as { folder?: string } | null;
    if (say) {
      void vscode.window.showInformationMessage(`Loom: trusted ${res?.folder ?? uri} with its current settings.`);
    }
  } catch (e) {
    void vscode.window.showErrorMessage(`Loom: could not trust the folder: ${errorText(e)}`);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = 'loom.chat';
  status.text = '$(loading~spin) Loom: starting';
  status.tooltip = 'Loom: starting loom-lsp';
  status.show();
  context.subscriptions.push(status);

  let c: LanguageClient | undefined;
  const feature = new LoomFeature();
  const chat = new Chat(context.extensionUri, {
    running: () => c?.isRunning() ?? false,
    ready: () => panelUp,
    whenReady: () => panelReady,
    // The server's own list: the loom.* commands are taken out of the capabilities (LoomFeature).
    has: (cmd: string) => feature.serverCommands.has(cmd),
    exec: async <T>(cmd: string, args: object): Promise<T> => {
      // A request made while loom-lsp starts (the panel is drawn before) waits for it.
      await serverUp?.catch(() => undefined);
      if (!c?.isRunning()) {
        throw new Error('loom-lsp is not running (see the Loom output).');
      }
      return await c.sendRequest(lsp.ExecuteCommandRequest.type, { command: cmd, arguments: [args] }) as T;
    },
  }, context.workspaceState);
  theChat = chat;
  // The conversation as it was before the window reloaded, drawn now (loom-lsp answers later).
  chat.drawKept();
  const composer = new Composer(chat);
  chat.composer = (m) => composer.handle(m);
  const conversations = new ConversationList(chat);
  const planMode = new PlanMode(chat);
  chat.planMode = (m) => planMode.handle(m);
  const subagents = new Subagents(chat);
  chat.subagents = (m) => subagents.handle(m);
  chat.imageDir = context.globalStorageUri.fsPath;
  const checkpoints = new Checkpoints(chat, context.workspaceState);
  chat.checkpoints = checkpoints;
  const review = new ReviewController(async (cmd, args) => {
    await serverUp?.catch(() => undefined);
    if (!c?.isRunning()) {
      throw new Error('loom-lsp is not running (see the Loom output).');
    }
    // The shown conversation, unless the command names its own.
    const a = { ...chat.conversationArgs(), ...(args as object) };
    return await c.sendRequest(lsp.ExecuteCommandRequest.type, { command: cmd, arguments: [a] });
  });
  // Review in the panel's edit cards and the diff editor's CodeLens.
  const editReview = new EditReview({
    exec: (cmd, args) => chat.exec(cmd, args),
    transcript: (f, conv) => chat.transcriptOf(f, conv),
    show: (f, items, conv) => chat.show(f, items, conv),
    panelVisible: () => chat.panel.visible,
    revealPanel: () => chat.panel.reveal(),
    onPanelVisible: chat.panel.onDidChangeVisible,
  });
  theReview = editReview;
  chat.review = (intent) => editReview.handle(intent);
  chat.reviewEdits = (st) => reviewEditsInForce(st);
  chat.onRedraw = (folder, proposals) => void editReview.resync(folder, proposals as ProposedChangesParams[] | undefined);
  chat.reviewWaiting = (t) => editReview.book.open(t.folder).some((p) => (p.params.conversation ?? '') === t.conversation || !p.params.conversation);
  context.subscriptions.push(
    editReview,
    chat.panel,
    vscode.window.registerWebviewViewProvider(ChatPanel.viewId, chat.panel),
    vscode.workspace.registerTextDocumentContentProvider(beforeScheme, chat),
    vscode.workspace.registerTextDocumentContentProvider(Checkpoints.scheme, checkpoints),
  );

  const drawStatus = () => {
    const headers = chat.headers();
    const cur = chat.current();
    const h = headers.find((x) => x.busy) ?? headers.find((x) => x.folder === cur) ?? headers[0];
    if (!h) {
      return;
    }
    const icon = h.down ? '$(error)' : h.busy ? '$(sync~spin)' : '$(comment-discussion)';
    status.text = `${icon} Loom: ${h.state}`;
    status.tooltip = headers.map((x) => `${x.name}${x.title ? ` — ${x.title}` : ''}: ${x.state}${x.model ? ` (${x.model})` : ''}`).join('\n') +
      '\nClick to open the chat.';
  };
  context.subscriptions.push(chat.onDidChangeHeader(drawStatus));

  const reg = (id: string, fn: (...a: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  // Ctrl+Alt+L: the panel, with the focus (and the keystrokes) in its input.
  reg('loom.chat', () => chat.panel.reveal(true));
  reg('loom.openSettings', () => openSettings());
  reg('loom.installServer', () => {
    const term = vscode.window.createTerminal('Loom: install loom-lsp');
    term.show();
    term.sendText(installCommand);
    void vscode.window.showInformationMessage(
      `Loom: running "${installCommand}" in a terminal. If the module is not published yet, run "go install ./cmd/loom-lsp" ` +
      'in a checkout of loom-lsp instead. Make sure $(go env GOPATH)/bin is on PATH (or set loom.path), then reload the window.',
      'Reload Window').then((b) => b && vscode.commands.executeCommand('workbench.action.reloadWindow'));
  });
  reg('loom.ask', async (arg?: unknown) => {
    await chat.panel.reveal();
    const args = askArgs(arg);
    if (args) {
      return chat.ask(args.args, args.context);
    }
    const prompt = await vscode.window.showInputBox({ prompt: 'Ask Loom', placeHolder: 'What should Loom do?' });
    if (!prompt) {
      return undefined;
    }
    return chat.ask({ prompt, ...selectionOf(vscode.window.activeTextEditor) });
  });
  reg('loom.askSelection', async () => {
    const ed = vscode.window.activeTextEditor;
    await chat.panel.reveal();
    const prompt = await vscode.window.showInputBox({ prompt: 'Ask Loom about the selection', placeHolder: 'Explain this code' });
    if (prompt) {
      await chat.ask({ prompt, ...selectionOf(ed) }, ed ? `${vscode.workspace.asRelativePath(ed.document.uri)}:${ed.selection.start.line + 1}-${ed.selection.end.line + 1}` : undefined);
    }
  });
  const inline = inlineCompletion(context, chat, () => c);
  reg('loom.cancel', () => chat.cancel());
  // "Loom: New Conversation" (the palette, the view's +): the header's New,
  // a conversation beside the others. (loom.reset emptied the shown one
  // in place: the server gives it a new id, and the panel, still sending
  // the old one, reopened the old history.)
  reg('loom.reset', () => conversations.create());
  reg('loom.undo', () => chat.undo());
  reg('loom.compact', () => chat.compact());
  reg('loom.reviewChange', () => editReview.reviewOldest());
  reg('loom.restoreCheckpoint', () => review.restoreCheckpoint());
  reg('loom.redo', () => review.redo());
  reg('loom.manageRules', () => manageRules(chat));
  reg('loom.toggleReview', async () => {
    const shown = chat.headers().find((h) => h.folder === chat.current());
    const on = shown?.reviewEdits ?? vscode.workspace.getConfiguration('loom').get<string>('tools.edits') === 'review';
    await setReviewEdits(!on);
    void vscode.window.showInformationMessage(on ? 'Loom: edits now apply at once.' : 'Loom: edits now wait for your review.');
  });
  reg('loom.history', async () => {
    const f = chat.current();
    if (f) {
      await chat.redraw(f);
    }
  });
  reg('loom.status', async () => {
    const f = chat.current();
    if (!f) {
      return;
    }
    try {
      const st = await chat.exec<Status>('loom.status', chat.conversationArgs());
      void vscode.window.showInformationMessage(statusWords(st));
    } catch (e) {
      void vscode.window.showErrorMessage(`Loom: ${errorText(e)}`);
    }
  });

  // loom-lsp starts once activate() has returned: VS Code resolves the
  // panel's webview only then, and the panel draws the conversation kept
  // across the reload (drawKept above) meanwhile. What the panel asks in
  // the meantime waits for the start (serverUp).
  const parts: Parts = { context, status, chat, feature, inline, checkpoints, planMode, subagents, editReview, conversations };
  serverUp = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    if (deactivated) {
      return undefined;
    }
    const conn = connect(parts);
    c = conn?.client;
    return conn?.up;
  });
  // No loom-lsp to start (connect found none, or failed): nothing to wait for.
  serverUp.then(() => c ? undefined : markPanelUp(), () => c ? undefined : markPanelUp());
  serverUp.catch((e) => {
    // A failed start is said by afterStart; this is connect's own failure.
    if (!c) {
      chat.setDown(true);
      chat.notice('error', `Could not start loom-lsp: ${errorText(e)}`);
    }
  });
}

/** What connect wires loom-lsp's messages to. */
interface Parts {
  context: vscode.ExtensionContext;
  status: vscode.StatusBarItem;
  chat: Chat;
  feature: LoomFeature;
  inline: InlineCompletion;
  checkpoints: Checkpoints;
  planMode: PlanMode;
  subagents: Subagents;
  editReview: EditReview;
  conversations: ConversationList;
}

/**
 * Loads vscode-languageclient, creates loom-lsp's client with its
 * handlers and starts it: the client and its start (the rest, after the
 * start, is afterStart's); undefined when the binary is not found (the
 * panel says how to install it).
 */
function connect(parts: Parts): { client: LanguageClient; up: Promise<void> } | undefined {
  const { context, status, chat, feature, inline, checkpoints, planMode, editReview } = parts;
  const reg = (id: string, fn: (...a: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  // The server binary.
  const configured = vscode.workspace.getConfiguration('loom').get<string>('path') || 'loom-lsp';
  const command = findExecutable(configured, process.env.PATH ?? '');
  if (!command) {
    chat.setDown(true);
    status.text = '$(error) Loom: loom-lsp not found';
    const msg = `loom-lsp was not found (loom.path is "${configured}"). Install it with "${installCommand}" ` +
      '(or, before the module is published, "go install ./cmd/loom-lsp" in a checkout of loom-lsp), ' +
      'or set loom.path to the binary; then reload the window.';
    chat.notice('error', msg, 'installServer');
    void vscode.window.showErrorMessage(`Loom: ${msg}`, 'Install loom-lsp', 'Set loom.path').then((b) => {
      if (b === 'Install loom-lsp') {
        void vscode.commands.executeCommand('loom.installServer');
      } else if (b) {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'loom.path');
      }
    });
    return undefined;
  }

  lsp = require('./client.js') as typeof import('./client');
  const serverOptions: ServerOptions = {
    run: { command, args: ['serve'], transport: lsp.TransportKind.stdio },
    debug: { command, args: ['serve', '-log-level', 'debug'], transport: lsp.TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    // Every file: the server needs the open buffers to edit what you see.
    documentSelector: [{ scheme: 'file' }],
    // The workspace's trust from the first moment: the server reads the
    // folder's .loom.toml before the first didChangeConfiguration.
    initializationOptions: trustLayer(vscode.workspace.isTrusted),
    // loom-lsp pulls its section (and takes no trust from it).
    middleware: { workspace: { configuration: (params, token, next) => pullConfiguration(params, token, next) } },
    outputChannelName: 'Loom',
  };
  const c = new lsp.LanguageClient('loom', 'Loom', serverOptions, clientOptions);
  client = c;
  const lc = c;
  c.registerFeature(feature);
  c.registerFeature(inline.feature);
  c.onNotification(Methods.displayMessage, (p: DisplayMessageParams) => chat.delta(p));
  c.onNotification(Methods.toolCall, (p: ToolCallParams) => chat.tool(p));
  c.onNotification(Methods.state, (p: StateParams) => chat.state(p));
  c.onNotification(Methods.turnEnded, (p: TurnEndedParams) => {
    chat.turnEnded(p);
    editReview.turnEnded(p.folder, p.conversation);
    void chat.refreshStatus();
  });
  c.onNotification(Methods.commit, (p: CommitParams) => {
    chat.commit(p);
    checkpoints.commit(p);
  });
  c.onNotification(Methods.mode, (p: ModeParams) => planMode.mode(p));
  c.onNotification(Methods.plan, (p: PlanParams) => planMode.plan(p));
  c.onNotification(Methods.planProposal, (p: PlanProposalParams) => planMode.proposal(p));
  c.onNotification(Methods.subagent, (p: SubagentParams) => parts.subagents.update(p));
  c.onNotification(commandChangesMethod, (p: CommandChangesParams) => checkpoints.commandChanges(p));
  c.onNotification(ReviewMethods.proposedChanges, (p: ProposedChangesParams) => editReview.proposed(p));
  // The conversation was rewound (from the panel, the palette or another
  // client): redrawn, and the prompt back in the panel's input.
  c.onNotification(ReviewMethods.rewound, (p: RewoundParams) => void checkpoints.rewound(p));
  // What an agent hook said: a line of the conversation, a warning when
  // it blocked, failed or was held back.
  c.onNotification(Methods.hook, (p: HookParams) => {
    const h = p.hook ?? {};
    const blocked = h.decision === 'deny' || h.decision === 'block' || !!h.problem || !!h.held;
    chat.notice(blocked ? 'warning' : 'info', p.text, undefined, p.folder, p.conversation);
  });
  c.onNotification(Methods.notice, (p: NoticeParams) => {
    if (checkpoints.quiet(p.folder, p.text, (p as { conversation?: string }).conversation)) {
      return; // the panel's own rewind says it in its words
    }
    chat.notice('info', p.text, undefined, p.folder, p.conversation);
    // loom-lsp pulls the settings and reloads after answering: its
    // "configuration reloaded" comes once the new model is in.
    void chat.refreshStatus();
    inline.refresh();
  });
  c.onRequest(Methods.diagnostics, (p: DiagnosticsParams) => answerDiagnostics(p, {
    isOpen: (uri) => vscode.workspace.textDocuments.some((d) => d.uri.toString() === vscode.Uri.parse(uri, true).toString()),
    open: async (uri) => {
      try {
        await vscode.workspace.openTextDocument(vscode.Uri.parse(uri, true));
        return true;
      } catch {
        return false;
      }
    },
    get: (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri, true)).map((d): LspDiagnostic => ({
      range: { start: { line: d.range.start.line, character: d.range.start.character } },
      severity: d.severity + 1,
      code: typeof d.code === 'object' ? d.code.value : d.code,
      source: d.source,
      message: d.message,
    })),
    onChange: (uri, cb) => vscode.languages.onDidChangeDiagnostics((e) => {
      const want = vscode.Uri.parse(uri, true).toString();
      if (e.uris.some((u) => u.toString() === want)) {
        cb();
      }
    }),
  }));
  c.onRequest(Methods.elicit, (p: ElicitParams): Promise<ElicitResult> => elicit(p, vscodeElicitUI));
  c.onRequest(Methods.saveDocuments, async (p: SaveDocumentsParams): Promise<SaveDocumentsResult> => {
    const saved = await saveDocuments(p?.uris ?? [], {
      documents: () => vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === 'file')
        .map((d) => ({ key: d.uri.fsPath, get isDirty() { return d.isDirty; }, save: () => saveConfirmed(d) })),
      key: (uri) => vscode.Uri.parse(uri, true).fsPath,
    });
    return { saved };
  });
  context.subscriptions.push(c.onDidChangeState((e) => {
    // Starting is not down: the panel shows the kept conversation, and what is asked meanwhile waits (serverUp).
    chat.setDown(e.newState === lsp.State.Stopped);
    if (e.newState === lsp.State.Running) {
      void chat.refreshStatus();
    }
  }));

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('loom.path')) {
      void vscode.window.showInformationMessage('Loom: reload the window to use the new loom.path.', 'Reload Window')
        .then((b) => b && vscode.commands.executeCommand('workbench.action.reloadWindow'));
    } else if (e.affectsConfiguration('loom') && lc.isRunning()) {
      void lc.sendNotification('workspace/didChangeConfiguration', { settings: serverSettings() })
        .then(() => chat.models.settingsChanged());
    }
  }));
  context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(() => {
    // Trusting the workspace in VS Code's prompt trusts its folders in
    // loom-lsp, with their settings as they are now.
    if (lc.isRunning()) {
      void Promise.all((vscode.workspace.workspaceFolders ?? []).map((f) => trustFolder(lc, f.uri.toString(), false)))
        .then(() => chat.models.settingsChanged());
    }
  }));
  reg(trustFolderCommand, async () => {
    const ed = vscode.window.activeTextEditor;
    const folder = (ed && vscode.workspace.getWorkspaceFolder(ed.document.uri)) ?? vscode.workspace.workspaceFolders?.[0];
    if (!folder || !lc.isRunning()) {
      return;
    }
    await trustFolder(lc, folder.uri.toString(), true);
    await chat.refreshStatus();
  });
  context.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders(() => chat.panel.refresh()));

  const up = c.start();
  void afterStart(c, up, parts, command);
  return { client: c, up };
}

/** Once loom-lsp has started: the settings sent, and every folder's panel drawn from the server. */
async function afterStart(c: LanguageClient, up: Promise<void>, parts: Parts, command: string): Promise<void> {
  const { status, chat, checkpoints, conversations } = parts;
  try {
    await up;
  } catch (e) {
    markPanelUp(); // what waits for the start fails now, saying why
    chat.setDown(true);
    status.text = '$(error) Loom';
    status.tooltip = `Loom: ${errorText(e)}`;
    chat.notice('error', `Could not start ${command}: ${errorText(e)}. Set loom.path to a working loom-lsp.`);
    void vscode.window.showErrorMessage(`Loom: could not start ${command}: ${errorText(e)}. Set loom.path.`);
    return;
  }
  try {
    await c.sendNotification('workspace/didChangeConfiguration', { settings: serverSettings() });
    takeOverWindowMessages(c, chat);
    // One loom.panelState per folder draws everything.
    const states = await conversations.start();
    await Promise.all(chat.folders().map((f) => checkpoints.load(f.path, states.get(f.path)?.commandChanges as CommandChangeWire[] | undefined)));
  } finally {
    // The prompts typed meanwhile go now (after the settings and the redraw).
    markPanelUp();
  }
}

/**
 * Routes the server's window/* messages: errors and retries go into the
 * conversation (and a pop-up only when the panel is hidden), approvals
 * into their tool card and a notification, the first answer winning;
 * log messages into the Loom output channel.
 */
function takeOverWindowMessages(c: LanguageClient, chat: Chat): void {
  const level = (t: MessageType) => t === lsp.MessageType.Error ? 'error' : t === lsp.MessageType.Warning ? 'warning' : 'info';
  c.onNotification(lsp.ShowMessageNotification.type, (p) => {
    // loom-lsp names the conversation a message comes from (params.loom).
    const from = (p as { loom?: { folder?: unknown; conversation?: unknown } }).loom;
    const source = typeof from?.folder === 'string' && typeof from.conversation === 'string'
      ? { folder: from.folder, conversation: from.conversation } : undefined;
    const shown = chat.serverMessage(level(p.type), p.message, source);
    // Also a toast when the panel is hidden, or shows another conversation.
    if (!shown || !chat.panel.visible || (source && !chat.shows(source.folder, source.conversation))) {
      const show = p.type === lsp.MessageType.Error ? vscode.window.showErrorMessage
        : p.type === lsp.MessageType.Warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(p.message);
    }
  });
  c.onNotification(lsp.LogMessageNotification.type, (p) => {
    const tag = ['', 'Error', 'Warn', 'Info', 'Log'][p.type] ?? 'Log';
    c.outputChannel.appendLine(`[${tag}] ${p.message}`);
  });
  c.onRequest(lsp.ShowMessageRequest.type, async (p, token) => {
    const actions = (p.actions ?? []) as ActionItem[];
    const titles = actions.map((a) => a.title);
    // The whole command, when the server says it (params.loom.command).
    const loom = (p as { loom?: { command?: unknown; folder?: unknown; conversation?: unknown } }).loom;
    const command = loom?.command;
    // The conversation that asks (maybe not the one shown: it keeps running).
    const where = typeof loom?.folder === 'string' && typeof loom.conversation === 'string'
      ? { folder: loom.folder, conversation: loom.conversation } : undefined;
    const asked = titles.includes('Allow') && titles.includes('Deny')
      ? chat.approvals.ask(p.message, actions, typeof command === 'string' ? command : undefined, where) : undefined;
    if (!asked) {
      const pick = await vscode.window.showWarningMessage(p.message, ...titles);
      return pick ? (actions.find((a) => a.title === pick) ?? { title: pick }) as MessageActionItem : null;
    }
    // The server takes the request back when it times out.
    const sub = token.onCancellationRequested(() => chat.approvals.withdrawn(asked.id));
    if (!chat.panel.visible || !asked.shown) {
      // The panel is hidden, or shows another conversation: ask in a notification too (Allow, Deny and
      // the exact rule; "every command" needs the card's confirmation).
      // When it shows, the card asks alone: VS Code cannot take a
      // notification back once the card has the answer.
      const exact = asked.offers.exact?.title;
      const buttons = exact ? ['Allow', 'Deny', exact] : ['Allow', 'Deny'];
      void vscode.window.showWarningMessage(p.message, ...buttons).then((pick) => {
        void chat.approvals.answer(asked.id, pick === exact && exact ? 'exact' : pick === 'Allow' ? 'allow' : 'deny');
      });
    }
    const reply: ApprovalReply = await asked.answer;
    sub.dispose();
    // A rule answer is the server's own action item (with the rule).
    if (reply.answer === 'exact' && asked.offers.exact) {
      return asked.offers.exact as MessageActionItem;
    }
    if (reply.answer === 'prefix' && asked.offers.prefix) {
      return ruleAnswer(asked.offers.prefix, reply.prefix) as MessageActionItem;
    }
    const a = reply.answer === 'always' ? 'always' : reply.answer === 'deny' ? 'deny' : 'allow';
    return { title: answerTitle(a, titles) };
  });
}

/** loom.ask's argument with the words shown under the prompt (the problem, or the lines). */
function askArgs(arg: unknown): { args: AskArgs; context?: string } | undefined {
  const args = parseAskArgument(arg);
  if (!args) {
    return undefined;
  }
  let context: string | undefined;
  if (args.selection?.diagnostic) {
    context = `Problem: ${args.selection.diagnostic}`;
  } else if (args.selection && args.uri) {
    const r = args.selection.range;
    context = `${vscode.workspace.asRelativePath(vscode.Uri.parse(args.uri))}:${r.start.line + 1}-${r.end.line + 1}`;
  }
  return { args, context };
}

function selectionOf(ed: vscode.TextEditor | undefined): Partial<AskArgs> {
  if (!ed || ed.document.uri.scheme !== 'file') {
    return {};
  }
  const out: Partial<AskArgs> = { uri: ed.document.uri.toString() };
  if (!ed.selection.isEmpty) {
    const s = ed.selection;
    out.selection = {
      range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
      text: ed.document.getText(s),
    };
  }
  return out;
}

/**
 * Saves d and resolves whether it was saved: when VS Code reports the save
 * (onDidSaveTextDocument), when save() says so, or, failing both within
 * 5 s, when the document is clean.
 */
function saveConfirmed(d: vscode.TextDocument): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let done = false;
    const finish = (v: boolean) => {
      if (!done) {
        done = true;
        sub.dispose();
        clearTimeout(timer);
        resolve(v);
      }
    };
    const sub = vscode.workspace.onDidSaveTextDocument((s) => {
      if (s.uri.toString() === d.uri.toString()) {
        finish(true);
      }
    });
    const timer = setTimeout(() => finish(!d.isDirty), 5000);
    d.save().then((ok) => {
      if (ok || !d.isDirty) {
        finish(true);
      }
    }, () => finish(false));
  });
}

/** loom.status in plain words. */
function statusWords(st: Status): string {
  let msg = `Loom is ${stateWords(st.state)}; model ${st.model || 'not configured'}; ${st.messages} message(s) in the conversation`;
  if (st.queued?.length) {
    msg += `; ${st.queued.length} prompt(s) queued`;
  }
  if (st.lastCommit) {
    msg += `; last commit ${st.lastCommit.slice(0, 7)}`;
  }
  if (st.configError) {
    msg += `. Configuration error: ${st.configError}`;
  }
  return msg + '.';
}

export async function deactivate(): Promise<void> {
  deactivated = true;
  // A reload must find the conversation as it was drawn, to the last change.
  await Promise.all([
    theChat?.flush().catch(() => { /* the record is a convenience */ }),
    theReview?.flushDrafts().catch(() => { /* so is the draft */ }),
  ]);
  if (client) {
    await client.stop();
    client = undefined;
  }
}
