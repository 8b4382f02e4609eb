// The chat panel: a WebviewView in Loom's own view container. It draws the
// transcripts the extension keeps (src/transcript.ts) and hands the user's
// clicks back to the extension. The webview's script is dist/webview.js
// (src/webview/main.ts), loaded under a strict Content-Security-Policy.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import type { BarFile, ContextItem, ConversationEntry, FromWebview, Header, Item, ToWebview } from './shared/messages';

/** What the panel needs from the extension. */
export interface PanelHost {
  /** The folders to pick from (path and name). */
  folders(): { path: string; name: string }[];
  /** The folder shown. */
  current(): string | undefined;
  /** The items and header of a folder's shown conversation. */
  snapshot(folder: string): { header: Header; items: Item[]; bar?: BarFile[] } | undefined;
  /** The conversation list of folder. */
  entries(folder: string): ConversationEntry[];
  /** Whether the panel shows conversation of folder (the folder shown, and its conversation shown). */
  shows(folder: string, conversation: string | undefined): boolean;
  /** A message from the webview (other than ready). */
  handle(msg: FromWebview): void | Promise<void>;
}

/** ChatPanel provides the loom.chatView webview view. */
export class ChatPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'loom.chatView';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly pending: ToWebview[] = [];
  private readonly subs: vscode.Disposable[] = [];
  private readonly visibility = new vscode.EventEmitter<boolean>();
  /** Fires when the panel comes on screen (true) or goes out of sight (false). */
  readonly onDidChangeVisible = this.visibility.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly host: PanelHost) {}

  /** Whether the panel is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    this.subs.push(view.webview.onDidReceiveMessage((m: FromWebview) => {
      if (m.type === 'ready') {
        this.ready = true;
        this.pending.length = 0;
        this.refresh();
        return;
      }
      void this.host.handle(m);
    }));
    this.subs.push(view.onDidChangeVisibility(() => this.visibility.fire(view.visible)));
    this.subs.push(view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    }));
  }

  /** Shows the panel (revealing its container); with focus, the input takes the keyboard. */
  async reveal(focus = false): Promise<void> {
    if (this.view && !focus) {
      this.view.show(true);
      return;
    }
    // Focusing the view gives the webview the keyboard; its input takes it.
    await vscode.commands.executeCommand(`${ChatPanel.viewId}.focus`);
    if (focus) {
      this.post({ type: 'focus' });
    }
  }

  /** Puts the keyboard in the input (when the panel has it). */
  focus(): void {
    this.post({ type: 'focus' });
  }

  /** Adds chips to the composer. */
  chips(items: ContextItem[]): void {
    this.post({ type: 'chips', items });
  }

  /** The setup card's model list (or why there is none). */
  setupModels(models: string[], error?: string): void {
    this.post({ type: 'setupModels', models, error });
  }

  /** Sends everything of the current folder. */
  refresh(): void {
    const folder = this.host.current();
    const snap = folder ? this.host.snapshot(folder) : undefined;
    const header: Header = snap?.header ?? { folder: '', name: '', model: '', state: 'no folder open', busy: false };
    this.post({ type: 'snapshot', folders: this.host.folders(), header, items: snap?.items ?? [] });
    this.post({ type: 'conversations', folder: folder ?? '', items: folder ? this.host.entries(folder) : [] });
    if (folder) {
      this.post({ type: 'filesBar', folder, files: snap?.bar ?? [] });
    }
  }

  /** Sends a folder's changed-files bar, if it is the one shown. */
  filesBar(folder: string, files: BarFile[]): void {
    if (folder === this.host.current()) {
      this.post({ type: 'filesBar', folder, files });
    }
  }

  /**
   * Sends changed items of a folder's conversation, if it is the one
   * shown: another conversation's items wait in its transcript until
   * it is shown.
   */
  upsert(folder: string, items: readonly Item[], conversation?: string): void {
    if (!this.host.shows(folder, conversation)) {
      return;
    }
    for (const item of items) {
      this.post({ type: 'upsert', folder, conversation, item });
    }
  }

  /** Sends a conversation's header, if it is the one shown. */
  header(header: Header): void {
    if (this.host.shows(header.folder, header.conversation)) {
      this.post({ type: 'header', header });
    }
  }

  /** Sends the list of the conversations of folder, if it is the one shown. */
  conversations(folder: string, items: ConversationEntry[]): void {
    if (folder === this.host.current()) {
      this.post({ type: 'conversations', folder, items });
    }
  }

  /** Puts text in the input box (only when it holds ifText, if given). */
  fill(text: string, ifText?: string): void {
    this.post(ifText === undefined ? { type: 'fill', text } : { type: 'fill', text, ifText });
  }

  private post(msg: ToWebview): void {
    if (!this.view) {
      return;
    }
    if (!this.ready) {
      // The snapshot sent on ready covers items; keep only what it doesn't.
      if (msg.type === 'fill' || msg.type === 'focus') {
        this.pending.push(msg);
      }
      return;
    }
    void this.view.webview.postMessage(msg);
    if (msg.type === 'snapshot') {
      for (const p of this.pending.splice(0)) {
        void this.view.webview.postMessage(p);
      }
    }
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
    const csp = [
      `default-src 'none'`,
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Loom</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const s of this.subs) {
      s.dispose();
    }
    this.visibility.dispose();
  }
}
