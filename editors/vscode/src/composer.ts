// The composer's helpers on the extension side: what "@" / "#" / Attach
// offers (files and folders, the selection, the problems of a file or of
// the workspace, the last terminal command and its output, the git
// changes) turned into loom.ask context items; the slash commands; the
// setup card's model list.
import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Chat } from './chat';
import { ruleWords, savedRules } from './approval';
import { listModels } from './modellist';
import { Commands, Status } from './protocol';
import type { MCPResource, MCPResourcesResult } from './wire.gen';
import type { ContextItem, DiagnosticItem, FromWebview } from './shared/messages';
import { resourceChoices, resourceItem } from './resources';
import { parseSlash } from './slash';
import { stateWords } from './status';

/** The most of a terminal's output or of the git changes attached. */
const maxText = 50_000;

type AttachWhat = 'selection' | 'problems' | 'files' | 'terminal' | 'git' | 'resource';

/** Composer answers the panel's attach, slash and listModels messages. */
export class Composer implements vscode.Disposable {
  private lastRun: { command: string; exitCode?: number; output: string } | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly chat: Chat) {
    this.watchTerminals();
  }

  async handle(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'attach': {
        const items = await this.attach(msg.what);
        if (items.length > 0) {
          this.chat.panel.chips(items);
        }
        break;
      }
      case 'slash':
        await this.slash(msg.name, msg.args);
        break;
      case 'listModels':
        try {
          const key = msg.apiKeyEnv.trim() ? process.env[msg.apiKeyEnv.trim()] : undefined;
          this.chat.panel.setupModels(await listModels(msg.baseUrl, key));
        } catch (e) {
          this.chat.panel.setupModels([], e instanceof Error ? e.message : String(e));
        }
        break;
    }
  }

  /** What to attach: a direct choice, or the user's pick. */
  async attach(what?: AttachWhat): Promise<ContextItem[]> {
    if (!what) {
      const ed = this.editor();
      const choices: (vscode.QuickPickItem & { what?: AttachWhat; scope?: 'file' | 'workspace'; resource?: MCPResource })[] = [
        { label: '$(files) Files and folders…', what: 'files' },
      ];
      if (ed && !ed.selection.isEmpty) {
        choices.push({ label: '$(selection) The selection', description: this.rangeLabel(ed), what: 'selection' });
      }
      if (ed) {
        choices.push({ label: '$(warning) Problems of this file', description: vscode.workspace.asRelativePath(ed.document.uri), what: 'problems', scope: 'file' });
      }
      choices.push({ label: '$(warning) Problems of the workspace', what: 'problems', scope: 'workspace' });
      if (this.lastRun) {
        choices.push({ label: '$(terminal) The last terminal command', description: this.lastRun.command, what: 'terminal' });
      }
      choices.push({ label: '$(git-compare) The git changes', description: 'git diff HEAD and new files', what: 'git' });
      const resources = resourceChoices(await this.mcpResources());
      if (resources.length > 0) {
        choices.push({ label: 'MCP resources', kind: vscode.QuickPickItemKind.Separator });
        choices.push(...resources.map((r) => ({ ...r, what: 'resource' as const })));
      }
      const pick = await vscode.window.showQuickPick(choices, { placeHolder: 'Attach to the prompt', matchOnDescription: true });
      if (!pick) {
        return [];
      }
      if (pick.what === 'resource' && pick.resource) {
        const item = await resourceItem(pick.resource, (o) => Promise.resolve(vscode.window.showInputBox({ ...o, ignoreFocusOut: true })));
        return item ? [item] : [];
      }
      if (pick.what === 'problems') {
        return [this.problems(pick.scope === 'file' ? ed?.document.uri : undefined)];
      }
      what = pick.what;
    }
    switch (what) {
      case 'files':
        return this.files();
      case 'selection': {
        const ed = this.editor();
        if (!ed || ed.selection.isEmpty) {
          return [];
        }
        const s = ed.selection;
        return [{
          kind: 'file', label: this.rangeLabel(ed), uri: ed.document.uri.toString(),
          range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
        }];
      }
      case 'problems':
        return [this.problems(this.editor()?.document.uri)];
      case 'terminal':
        return this.lastRun ? [{
          kind: 'text', label: `$ ${this.lastRun.command}`,
          text: `$ ${this.lastRun.command}\n${this.lastRun.output}${this.lastRun.exitCode !== undefined ? `\n(exit code ${this.lastRun.exitCode})` : ''}`,
        }] : [];
      case 'git':
        return this.gitChanges();
    }
    return [];
  }

  /** The folder's MCP resources (loom.mcpResources); none from a loom-lsp without the command. */
  private async mcpResources(): Promise<MCPResource[]> {
    if (!this.chat.current()) {
      return [];
    }
    try {
      const res = await this.chat.exec<MCPResourcesResult>(Commands.mcpResources, this.chat.conversationArgs());
      return res?.resources ?? [];
    } catch {
      return [];
    }
  }

  private editor(): vscode.TextEditor | undefined {
    const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'file');
    return ed?.document.uri.scheme === 'file' ? ed : undefined;
  }

  private rangeLabel(ed: vscode.TextEditor): string {
    return `${vscode.workspace.asRelativePath(ed.document.uri)}:${ed.selection.start.line + 1}-${ed.selection.end.line + 1}`;
  }

  /** A quick pick of the workspace's files and folders (several may be picked). */
  private async files(): Promise<ContextItem[]> {
    const folder = this.chat.current();
    if (!folder) {
      return [];
    }
    const base = vscode.Uri.file(folder);
    const found = await vscode.workspace.findFiles(new vscode.RelativePattern(base, '**/*'), '**/{node_modules,.git}/**', 5000);
    const dirs = new Set<string>();
    const files = found.map((u) => path.relative(folder, u.fsPath)).sort();
    for (const f of files) {
      for (let d = path.dirname(f); d !== '.' && d !== ''; d = path.dirname(d)) {
        dirs.add(d);
      }
    }
    const items = [
      ...[...dirs].sort().map((d) => ({ label: `$(folder) ${d}/`, rel: d, dir: true })),
      ...files.map((f) => ({ label: `$(file) ${f}`, rel: f, dir: false })),
    ];
    const picks = await vscode.window.showQuickPick(items, { canPickMany: true, placeHolder: 'Files and folders to attach', matchOnDescription: true });
    return (picks ?? []).map((p) => ({
      kind: 'file' as const, label: p.dir ? p.rel + '/' : p.rel, uri: vscode.Uri.file(path.join(folder, p.rel)).toString(),
    }));
  }

  /** The problems VS Code knows of uri, or of the whole workspace. */
  problems(uri?: vscode.Uri): ContextItem {
    const all: [vscode.Uri, readonly vscode.Diagnostic[]][] = uri ? [[uri, vscode.languages.getDiagnostics(uri)]] : vscode.languages.getDiagnostics();
    const items: DiagnosticItem[] = [];
    for (const [u, ds] of all) {
      if (u.scheme !== 'file') {
        continue;
      }
      for (const d of ds) {
        items.push({
          uri: u.toString(),
          range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
          severity: (['error', 'warning', 'info', 'hint'] as const)[d.severity] ?? 'error',
          message: d.message,
          ...(d.source ? { source: d.source } : {}),
          ...(d.code !== undefined ? { code: String(typeof d.code === 'object' ? d.code.value : d.code) } : {}),
        });
      }
    }
    const where = uri ? vscode.workspace.asRelativePath(uri) : 'workspace';
    return { kind: 'diagnostics', label: `problems: ${where} (${items.length})`, ...(uri ? { uri: uri.toString() } : {}), items };
  }

  /** The git changes of the folder: git diff HEAD, and the new files' names. */
  private async gitChanges(): Promise<ContextItem[]> {
    const folder = this.chat.current();
    if (!folder) {
      return [];
    }
    const git = (...args: string[]) => new Promise<string>((resolve, reject) =>
      execFile('git', args, { cwd: folder, maxBuffer: 8 << 20 }, (err, out) => err ? reject(err) : resolve(out)));
    try {
      const diff = await git('diff', 'HEAD', '--no-color', '--no-ext-diff');
      const untracked = (await git('ls-files', '--others', '--exclude-standard')).trim();
      let text = diff + (untracked ? `\nNew files:\n${untracked}\n` : '');
      if (text.trim() === '') {
        this.chat.notice('info', 'No git changes to attach.');
        return [];
      }
      if (text.length > maxText) {
        text = text.slice(0, maxText) + `\n… (${text.length - maxText} more characters)`;
      }
      return [{ kind: 'text', label: 'git changes', text }];
    } catch (e) {
      this.chat.notice('error', `Could not read the git changes: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
  }

  /** Keeps the last command run in a terminal with shell integration, and its output. */
  private watchTerminals(): void {
    // VS Code 1.93+: the shell-integration execution events (absent before).
    const w = vscode.window as unknown as {
      onDidStartTerminalShellExecution?: vscode.Event<{ execution: { commandLine: { value: string }; read(): AsyncIterable<string> } }>;
      onDidEndTerminalShellExecution?: vscode.Event<{ execution: { commandLine: { value: string } }; exitCode?: number }>;
    };
    const outputs = new WeakMap<object, { text: string }>();
    if (w.onDidStartTerminalShellExecution) {
      this.subs.push(w.onDidStartTerminalShellExecution((e) => {
        const buf = { text: '' };
        outputs.set(e.execution, buf);
        void (async () => {
          for await (const chunk of e.execution.read()) {
            buf.text = (buf.text + chunk).slice(-maxText);
          }
        })().catch(() => { /* the terminal went away */ });
      }));
    }
    if (w.onDidEndTerminalShellExecution) {
      this.subs.push(w.onDidEndTerminalShellExecution((e) => {
        const output = (outputs.get(e.execution)?.text ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g, '');
        this.lastRun = { command: e.execution.commandLine.value, exitCode: e.exitCode, output };
      }));
    }
  }

  /** Runs a slash command typed in the composer. */
  async slash(name: string, args: string): Promise<void> {
    const cmd = parseSlash(`/${name} ${args}`);
    switch (cmd?.name) {
      case 'new':
        await (this.chat.conversationList ? this.chat.conversationList({ type: 'newConversation' }) : this.chat.reset());
        break;
      case 'compact':
        await this.chat.compact();
        break;
      case 'undo':
        await this.chat.undo();
        break;
      case 'rewind': {
        const all = await vscode.commands.getCommands(true);
        if (all.includes('loom.rewind')) {
          await vscode.commands.executeCommand('loom.rewind');
        } else {
          this.chat.notice('info', '/rewind is not in this version of the extension yet.');
        }
        break;
      }
      case 'model':
        await (cmd.args ? this.chat.models.setModel(cmd.args) : this.chat.models.pickModel());
        break;
      case 'status':
        await this.status();
        break;
      default:
        this.chat.notice('error', `Unknown command /${name}. The commands are /new, /compact, /undo, /rewind, /model and /status.`);
    }
  }

  /** loom.status in the conversation, with the folder's command rules. */
  private async status(): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    try {
      const st = await this.chat.exec<Status>(Commands.status, this.chat.conversationArgs());
      const lines = [
        `State: ${stateWords(st.state)}; model: ${st.model || 'not set'}; ${st.messages} message(s); ${st.queued?.length ?? 0} queued.`,
      ];
      if (st.lastCommit) {
        lines.push(`Last commit: ${st.lastCommit.slice(0, 7)}.`);
      }
      const rules = savedRules(st).map(ruleWords);
      lines.push(rules.length > 0 ? `Always allowed: ${rules.join(', ')}.` : 'No approval rules: commands and MCP tools are asked (or as loom.tools.bash and loom.mcp.approve say).');
      if (st.configError) {
        lines.push(`Configuration error: ${st.configError}`);
      }
      this.chat.notice('info', lines.join('\n'));
    } catch (e) {
      this.chat.notice('error', e instanceof Error ? e.message : String(e));
    }
  }

  dispose(): void {
    for (const s of this.subs) {
      s.dispose();
    }
  }
}
