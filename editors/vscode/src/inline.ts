// Inline completion (LSP 3.18 textDocument/inlineCompletion), the half
// that needs no vscode: the request's params, the answer's items, the
// cancellation, and the switch in the status bar (on/off, the model).
// vscode-languageclient 9 does not carry 3.18's inline completion, so the
// provider (inlinefeature.ts) sends the request itself. No vscode
// imports: tested under node.
import type { CompletionStatus } from './wire.gen';

/** The LSP 3.18 method. */
export const inlineCompletionMethod = 'textDocument/inlineCompletion';
/** The server's command an item runs when accepted (a line in loom's local completion.log). */
export const inlineAcceptedCommand = 'loom.inlineCompletionAccepted';
/** The status item's command: turns inline completion on or off. */
export const toggleInlineCommand = 'loom.toggleInlineCompletion';
/** Where the switch is kept (the extension's global state). */
export const inlineEnabledKey = 'loom.inlineCompletion.enabled';

export interface Pos { line: number; character: number }
export interface Rng { start: Pos; end: Pos }

/** textDocument/inlineCompletion's params. */
export interface InlineCompletionParams {
  textDocument: { uri: string };
  position: Pos;
  context: { triggerKind: 1 | 2; selectedCompletionInfo?: { range: Rng; text: string } };
}

/** An InlineCompletionItem as the server sends it. */
export interface WireInlineItem {
  insertText: string | { kind: 'snippet'; value: string };
  filterText?: string;
  range?: Rng;
  command?: { title: string; command: string; arguments?: unknown[] };
}

/** What cancels a request (vscode.CancellationToken has it). */
export interface Cancel { readonly isCancellationRequested: boolean }

/**
 * The request's params at a position. triggerKind is VS Code's
 * (Invoke 0, Automatic 1), sent as LSP's (Invoked 1, Automatic 2).
 */
export function inlineParams(uri: string, position: Pos, triggerKind: number, selected?: { range: Rng; text: string }): InlineCompletionParams {
  const p: InlineCompletionParams = {
    textDocument: { uri },
    position: { line: position.line, character: position.character },
    context: { triggerKind: triggerKind === 0 ? 1 : 2 },
  };
  if (selected) {
    p.context.selectedCompletionInfo = { range: selected.range, text: selected.text };
  }
  return p;
}

function isPos(v: unknown): v is Pos {
  const p = v as Pos;
  return typeof p === 'object' && p !== null && Number.isInteger(p.line) && Number.isInteger(p.character);
}

function isRange(v: unknown): v is Rng {
  const r = v as Rng;
  return typeof r === 'object' && r !== null && isPos(r.start) && isPos(r.end);
}

/**
 * The items of an answer: an InlineCompletionList, an array of items, or
 * null (none). Items that are not items are left out, never thrown.
 */
export function inlineItems(result: unknown): WireInlineItem[] {
  const list = Array.isArray(result) ? result : (result as { items?: unknown } | null)?.items;
  if (!Array.isArray(list)) {
    return [];
  }
  return list.filter((it): it is WireInlineItem => {
    if (typeof it !== 'object' || it === null) {
      return false;
    }
    const t = (it as WireInlineItem).insertText;
    const text = typeof t === 'string' || (typeof t === 'object' && t !== null && typeof t.value === 'string');
    const range = (it as WireInlineItem).range;
    return text && (range === undefined || isRange(range));
  });
}

/**
 * Asks the server (send, which carries the token to the request, so
 * that VS Code's cancellation sends $/cancelRequest) and returns its
 * items; none when the request was cancelled before or while it ran, or
 * failed (said to onError, unless it was a cancellation).
 */
export async function askInline(send: (p: InlineCompletionParams) => Promise<unknown>, params: InlineCompletionParams, token: Cancel,
  onError?: (e: unknown) => void): Promise<WireInlineItem[]> {
  if (token.isCancellationRequested) {
    return [];
  }
  try {
    const result = await send(params);
    return token.isCancellationRequested ? [] : inlineItems(result);
  } catch (e) {
    // RequestCancelled (-32800) and ContentModified (-32801) are the
    // editor's own doing: nothing to say.
    const code = (e as { code?: unknown } | null)?.code;
    if (!token.isCancellationRequested && code !== -32800 && code !== -32801) {
      onError?.(e);
    }
    return [];
  }
}

/** The completion API in words. */
const apiWords: Record<string, string> = {
  infill: 'llama.cpp /infill',
  completions: '/completions',
  ollama: 'Ollama',
  mistral: 'Mistral FIM',
  chat: 'a chat model',
};

/** The model in words: its name, else its server's kind. */
export function modelWords(c: CompletionStatus | undefined): string {
  if (!c) {
    return 'the completion model';
  }
  return c.model ? c.model : apiWords[c.api] ?? c.api;
}

/** What the status item shows. */
export interface SwitchView { visible: boolean; text: string; tooltip: string }

/**
 * The status bar's switch: whether the user wants inline completion
 * (kept across sessions), whether the server serves it (its
 * registrations: the static capability or client/registerCapability),
 * and the model it uses (loom.status's completion).
 */
export class InlineSwitch {
  private readonly registrations = new Set<string>();
  /** The model loom.status named last (undefined: not known yet). */
  model: CompletionStatus | undefined;

  constructor(public enabled: boolean) {}

  /** Whether the server serves inline completion now. */
  get served(): boolean {
    return this.registrations.size > 0;
  }

  register(id: string): void {
    this.registrations.add(id);
  }

  unregister(id: string): void {
    this.registrations.delete(id);
  }

  clear(): void {
    this.registrations.clear();
  }

  /** Turns it on or off; returns the new state. */
  toggle(): boolean {
    this.enabled = !this.enabled;
    return this.enabled;
  }

  /** Whether the provider asks the server now. */
  get asking(): boolean {
    return this.enabled && this.served;
  }

  view(): SwitchView {
    if (!this.served) {
      return { visible: false, text: '', tooltip: '' };
    }
    const model = modelWords(this.model);
    return this.enabled
      ? { visible: true, text: `$(sparkle) ${model}`, tooltip: `Loom inline completion: on, from ${model}. Click to turn it off.` }
      : { visible: true, text: `$(circle-slash) ${model}`, tooltip: `Loom inline completion: off (${model}). Click to turn it on.` };
  }
}
