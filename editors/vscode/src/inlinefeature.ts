// The inline completion provider backed by loom-lsp: a dynamic feature
// of the language client for textDocument/inlineCompletion (LSP 3.18,
// which vscode-languageclient 9 does not carry). It declares
// textDocument.inlineCompletion.dynamicRegistration, so loom-lsp
// registers it with client/registerCapability as the settings turn
// completion on (and unregisters it when they turn it off); a static
// inlineCompletionProvider in the initialize result registers it too.
// The provider asks only while the status bar's switch is on.
import * as vscode from 'vscode';
import type {
  ClientCapabilities, DynamicFeature, FeatureState, LanguageClient, RegistrationData, RegistrationType, ServerCapabilities,
} from 'vscode-languageclient/node';
import { askInline, inlineCompletionMethod, inlineParams, InlineSwitch, WireInlineItem } from './inline';

/** What the feature needs of the extension. */
export interface InlineDeps {
  /** The running client, if any. */
  client(): LanguageClient | undefined;
  /** The switch (on/off, served, model). */
  sw: InlineSwitch;
  /** The switch's view changed (or the server began or stopped serving). */
  changed(): void;
  /** A request failed (not cancelled). */
  failed(e: unknown): void;
}

export class InlineCompletionFeature implements DynamicFeature<object> {
  readonly registrationType = { method: inlineCompletionMethod } as unknown as RegistrationType<object>;
  private readonly providers = new Map<string, vscode.Disposable>();
  private readonly provider: vscode.InlineCompletionItemProvider;

  constructor(private readonly deps: InlineDeps) {
    this.provider = { provideInlineCompletionItems: (doc, pos, ctx, token) => this.provide(doc, pos, ctx, token) };
  }

  fillClientCapabilities(caps: ClientCapabilities): void {
    const td = (caps.textDocument ??= {}) as Record<string, unknown>;
    td.inlineCompletion = { dynamicRegistration: true };
  }

  initialize(caps: ServerCapabilities): void {
    // A server that declares it at initialize (loom-lsp does not, to a
    // client that registers dynamically; another server might).
    if ((caps as { inlineCompletionProvider?: unknown }).inlineCompletionProvider) {
      this.register({ id: 'initialize', registerOptions: {} });
    }
  }

  getState(): FeatureState {
    return { kind: 'workspace', id: inlineCompletionMethod, registrations: this.providers.size > 0 };
  }

  register(data: RegistrationData<object>): void {
    this.providers.get(data.id)?.dispose();
    const sel = (data.registerOptions as { documentSelector?: vscode.DocumentFilter[] | null }).documentSelector;
    const selector: vscode.DocumentSelector = sel && sel.length > 0 ? sel : [{ scheme: 'file' }];
    this.providers.set(data.id, vscode.languages.registerInlineCompletionItemProvider(selector, this.provider));
    this.deps.sw.register(data.id);
    this.deps.changed();
  }

  unregister(id: string): void {
    this.providers.get(id)?.dispose();
    this.providers.delete(id);
    this.deps.sw.unregister(id);
    this.deps.changed();
  }

  clear(): void {
    for (const d of this.providers.values()) {
      d.dispose();
    }
    this.providers.clear();
    this.deps.sw.clear();
    this.deps.changed();
  }

  private async provide(doc: vscode.TextDocument, pos: vscode.Position, ctx: vscode.InlineCompletionContext,
    token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[]> {
    const c = this.deps.client();
    if (!this.deps.sw.asking || !c?.isRunning()) {
      return [];
    }
    const sel = ctx.selectedCompletionInfo;
    const params = inlineParams(doc.uri.toString(), pos, ctx.triggerKind,
      sel ? { range: { start: sel.range.start, end: sel.range.end }, text: sel.text } : undefined);
    const items = await askInline((p) => c.sendRequest(inlineCompletionMethod, p, token), params, token, (e) => this.deps.failed(e));
    return items.map(toItem);
  }
}

/** A server's item as VS Code's. */
function toItem(it: WireInlineItem): vscode.InlineCompletionItem {
  const text = typeof it.insertText === 'string' ? it.insertText : new vscode.SnippetString(it.insertText.value);
  const range = it.range ? new vscode.Range(it.range.start.line, it.range.start.character, it.range.end.line, it.range.end.character) : undefined;
  const item = new vscode.InlineCompletionItem(text, range);
  if (it.filterText !== undefined) {
    item.filterText = it.filterText;
  }
  if (it.command) {
    item.command = { title: it.command.title, command: it.command.command, arguments: it.command.arguments };
  }
  return item;
}
