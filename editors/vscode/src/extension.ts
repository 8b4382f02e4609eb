// The VS Code client of loom-lsp: starts the server over stdio, declares
// experimental.loom, streams the chat, shows the state in the status bar and
// saves documents before the agent's auto-commit.
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, TransportKind,
} from 'vscode-languageclient/node';
import { ChatView } from './chat';
import { LoomFeature } from './feature';
import {
  AskArgs, AskResult, Commands, DisplayMessageParams, HistoryResult, isBusy,
  Methods, SaveDocumentsParams, SaveDocumentsResult, StateParams, stateLabel, Status, ToolCallParams,
  UndoResult,
} from './protocol';
import { saveDocuments } from './save';
import { LoomSettings, toServerConfig } from './settings';

let client: LanguageClient | undefined;

function settings(): LoomSettings {
  const c = vscode.workspace.getConfiguration('loom');
  return {
    model: {
      provider: c.get<string>('model.provider'),
      baseUrl: c.get<string>('model.baseUrl'),
      name: c.get<string>('model.name'),
      apiKeyEnv: c.get<string>('model.apiKeyEnv'),
    },
    tools: { bash: c.get<string>('tools.bash') },
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const chat = new ChatView();
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = Commands.status;
  status.text = '$(circle-outline) Loom';
  status.tooltip = 'Loom: starting';
  status.show();
  context.subscriptions.push(chat, status);
  const states = new Map<string, string>();

  const command = vscode.workspace.getConfiguration('loom').get<string>('path') || 'loom-lsp';
  const serverOptions: ServerOptions = {
    run: { command, args: ['serve'], transport: TransportKind.stdio },
    debug: { command, args: ['serve', '-log-level', 'debug'], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    // Every file: the server needs the open buffers to edit what you see.
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: toServerConfig(settings()),
    outputChannelName: 'Loom',
  };
  const c = new LanguageClient('loom', 'Loom', serverOptions, clientOptions);
  client = c;
  c.registerFeature(new LoomFeature());

  c.onNotification(Methods.displayMessage, (p: DisplayMessageParams) => chat.delta(p));
  c.onNotification(Methods.toolCall, (p: ToolCallParams) => chat.tool(p));
  c.onNotification(Methods.state, (p: StateParams) => {
    states.set(p.folder, p.state);
    const busy = [...states.values()].some(isBusy);
    status.text = `${busy ? '$(sync~spin)' : '$(circle-outline)'} Loom: ${stateLabel(p.state)}`;
    status.tooltip = [...states].map(([f, s]) => `${f}: ${s}`).join('\n');
    if (p.state === 'WaitingForUserInput' && chat.assembler.takeGap(p.folder)) {
      void history(p.folder);
    }
  });
  c.onRequest(Methods.saveDocuments, async (p: SaveDocumentsParams): Promise<SaveDocumentsResult> => {
    const saved = await saveDocuments(p?.uris ?? [], {
      documents: () => vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === 'file')
        .map((d) => ({ key: d.uri.fsPath, isDirty: d.isDirty, save: () => d.save() })),
      key: (uri) => vscode.Uri.parse(uri, true).fsPath,
    });
    return { saved };
  });

  async function exec<T>(cmd: string, args: object): Promise<T | undefined> {
    if (!c.isRunning()) {
      void vscode.window.showErrorMessage('Loom: the server is not running (see the Loom output).');
      return undefined;
    }
    try {
      return await c.sendRequest(ExecuteCommandRequest.type, { command: cmd, arguments: [args] }) as T;
    } catch (e) {
      void vscode.window.showErrorMessage(`Loom: ${cmd}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  function currentUri(): string | undefined {
    const ed = vscode.window.activeTextEditor;
    if (ed && ed.document.uri.scheme === 'file') {
      return c.code2ProtocolConverter.asUri(ed.document.uri);
    }
    const f = vscode.workspace.workspaceFolders?.[0];
    return f ? c.code2ProtocolConverter.asUri(f.uri) : undefined;
  }

  async function history(folder?: string): Promise<void> {
    const h = await exec<HistoryResult>(Commands.history, { uri: folder ? c.code2ProtocolConverter.asUri(vscode.Uri.file(folder)) : currentUri() });
    if (h) {
      chat.redraw(h);
    }
  }

  const reg = (id: string, fn: (...a: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg(Commands.ask, async (prompt?: unknown) => {
    const text = typeof prompt === 'string' ? prompt : await vscode.window.showInputBox({ prompt: 'Ask Loom', placeHolder: 'What should Loom do?' });
    if (!text) {
      return undefined;
    }
    const args: AskArgs = { prompt: text, uri: currentUri() };
    const ed = vscode.window.activeTextEditor;
    if (ed && !ed.selection.isEmpty && ed.document.uri.scheme === 'file') {
      const s = ed.selection;
      args.selection = {
        range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
        text: ed.document.getText(s),
      };
    }
    const folder = ed ? vscode.workspace.getWorkspaceFolder(ed.document.uri)?.uri.fsPath : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    chat.prompt(folder, text);
    chat.show();
    return exec<AskResult>(Commands.ask, args);
  });
  reg(Commands.cancel, () => exec(Commands.cancel, { uri: currentUri() }));
  reg(Commands.reset, async () => {
    await exec(Commands.reset, { uri: currentUri() });
    chat.note('-- new conversation --');
  });
  reg(Commands.status, async () => {
    const st = await exec<Status>(Commands.status, { uri: currentUri() });
    if (!st) {
      return;
    }
    let msg = `Loom: ${st.state}, model ${st.model || '?'}, ${st.messages} message(s)`;
    if (st.queued?.length) {
      msg += `, ${st.queued.length} queued`;
    }
    if (st.lastCommit) {
      msg += `, last commit ${st.lastCommit.slice(0, 12)}`;
    }
    if (st.configError) {
      void vscode.window.showWarningMessage(`${msg}. Config error: ${st.configError}`);
    } else {
      void vscode.window.showInformationMessage(msg);
    }
  });
  reg(Commands.history, () => history());
  reg(Commands.undo, async () => {
    const r = await exec<UndoResult>(Commands.undo, { uri: currentUri() });
    if (r) {
      void vscode.window.showInformationMessage(`Loom: ${r.message}`);
    }
  });
  reg('loom.chat', () => chat.show(false));

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('loom.path')) {
      void vscode.window.showInformationMessage('Loom: reload the window to use the new loom.path.');
    } else if (e.affectsConfiguration('loom') && c.isRunning()) {
      void c.sendNotification('workspace/didChangeConfiguration', { settings: toServerConfig(settings()) });
    }
  }));

  try {
    await c.start();
    status.tooltip = 'Loom: running';
  } catch (e) {
    status.text = '$(error) Loom';
    status.tooltip = `Loom: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`Loom: could not start ${command}: ${e instanceof Error ? e.message : String(e)}. Set loom.path.`);
  }
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
}
