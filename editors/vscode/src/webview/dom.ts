// The webview's small DOM helpers, its one channel to the extension and
// the state that survives the panel being hidden or the window reloading.
import type { ContextItem, FromWebview, Header, Item } from '../shared/messages';

interface VsCodeApi {
  postMessage(msg: FromWebview): void;
  getState(): SavedState | undefined;
  setState(s: SavedState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What survives the panel being hidden or the window reloading. */
export interface SavedState {
  folders: { path: string; name: string }[];
  header: Header | undefined;
  items: Item[];
  draft: string;
  /** The composer's attachments, not sent yet. */
  chips: ContextItem[];
  /** The user folded the todo list. */
  planFolded?: boolean;
}

const api = acquireVsCodeApi();
const restored = api.getState();

/** The panel's state (restored, then kept up to date). */
export const state: SavedState = {
  folders: restored?.folders ?? [],
  header: restored?.header,
  items: restored?.items ?? [],
  draft: restored?.draft ?? '',
  chips: restored?.chips ?? [],
  planFolded: restored?.planFolded,
};

/** Sends a message to the extension. */
export function post(msg: FromWebview): void {
  api.postMessage(msg);
}

/** Saves the state. */
export function save(): void {
  api.setState(state);
}

/** A new element with a class and a text. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) {
    e.className = cls;
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

/** A button that runs onClick (and nothing else on the page). */
export function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', cls, label);
  b.type = 'button';
  if (title) {
    b.title = title;
  }
  b.addEventListener('click', (ev) => {
    ev.stopPropagation();
    onClick();
  });
  return b;
}

/** "12.3k" for token counts. */
export function formatTokens(n: number): string {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
