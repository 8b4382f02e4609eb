// The chat panel's script (bundled to dist/webview.js, runs in the
// webview). It draws what the extension sends (src/shared/messages.ts) and
// posts the user's actions back. Markdown goes through markdown-it with
// HTML disabled; code blocks are highlighted with highlight.js.
import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';
import type { FromWebview, Header, Item, ToWebview } from '../shared/messages';

interface VsCodeApi {
  postMessage(msg: FromWebview): void;
  getState(): SavedState | undefined;
  setState(s: SavedState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What survives the panel being hidden or the window reloading. */
interface SavedState {
  folders: { path: string; name: string }[];
  header: Header | undefined;
  items: Item[];
  draft: string;
}

const vscode = acquireVsCodeApi();
const state: SavedState = vscode.getState() ?? { folders: [], header: undefined, items: [], draft: '' };

const md = new MarkdownIt({
  html: false,
  linkify: true,
  highlight: (code, lang) => {
    if (lang && hljs.getLanguage(lang)) {
      try {
        return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
      } catch { /* plain */ }
    }
    return '';
  },
});
const fence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const lang = tokens[idx].info.trim().split(/\s+/)[0] ?? '';
  return `<div class="code"><div class="code-bar"><span class="lang">${md.utils.escapeHtml(lang)}</span>` +
    `<button class="link" data-act="copy" title="Copy the code">Copy</button>` +
    `<button class="link" data-act="insert" title="Insert at the cursor of the active editor">Insert</button></div>` +
    fence(tokens, idx, options, env, self) + '</div>';
};

// --- the page ---------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) {
    e.className = cls;
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el('button', cls, label);
  if (title) {
    b.title = title;
  }
  b.addEventListener('click', (ev) => {
    ev.stopPropagation();
    onClick();
  });
  return b;
}

const app = document.getElementById('app')!;
const bar = el('header', 'bar');
const picker = el('select', 'folders');
picker.title = 'Workspace folder';
const title = el('div', 'title');
const modelEl = el('span', 'model');
const stateEl = el('span', 'state');
const usageEl = el('span', 'usage');
title.append(modelEl, stateEl, usageEl);
const newBtn = button('New', 'icon', () => post({ type: 'reset' }), 'New conversation (loom.reset)');
bar.append(picker, title, newBtn);

const log = el('main', 'log');
log.setAttribute('role', 'log');
log.setAttribute('aria-live', 'polite');
const empty = el('div', 'empty');
empty.innerHTML = '<h2>Loom</h2><p>Ask about this workspace, or ask for a change. Loom reads and edits files, runs commands when you allow it, and commits what it changed.</p>';

const form = el('footer', 'composer');
const input = el('textarea', 'input');
input.rows = 3;
input.placeholder = 'Ask Loom… (Enter to send, Shift+Enter for a new line)';
input.setAttribute('aria-label', 'Message to Loom');
const sendBtn = el('button', 'send primary', 'Send');
form.append(input, sendBtn);
app.append(bar, log, form);

picker.addEventListener('change', () => post({ type: 'pickFolder', folder: picker.value }));
input.value = state.draft;
input.addEventListener('input', () => {
  state.draft = input.value;
  save();
});
input.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send();
  }
});
sendBtn.addEventListener('click', () => {
  if (state.header?.busy && input.value.trim() === '') {
    post({ type: 'stop' });
  } else {
    send();
  }
});

function send(): void {
  const text = input.value.trim();
  if (text === '') {
    return;
  }
  post({ type: 'send', text });
  input.value = '';
  state.draft = '';
  save();
}

function post(msg: FromWebview): void {
  vscode.postMessage(msg);
}

function save(): void {
  vscode.setState(state);
}

// Copy / Insert of code blocks: one listener for every block.
log.addEventListener('click', (ev) => {
  const t = ev.target as HTMLElement;
  const act = t.dataset?.act;
  if (act !== 'copy' && act !== 'insert') {
    return;
  }
  const code = t.closest('.code')?.querySelector('pre code')?.textContent ?? '';
  post(act === 'copy' ? { type: 'copy', text: code } : { type: 'insert', text: code });
  if (act === 'copy') {
    t.textContent = 'Copied';
    setTimeout(() => { t.textContent = 'Copy'; }, 1200);
  }
});

// --- drawing ----------------------------------------------------------------

const nodes = new Map<string, HTMLElement>();

function drawHeader(h: Header | undefined): void {
  picker.replaceChildren(...state.folders.map((f) => {
    const o = el('option', undefined, f.name);
    o.value = f.path;
    o.selected = f.path === h?.folder;
    return o;
  }));
  picker.hidden = state.folders.length < 2;
  modelEl.textContent = h?.model || 'no model';
  modelEl.title = h?.model ? `Model: ${h.model}` : 'No model configured: set loom.model.* in Settings';
  stateEl.textContent = h?.state ?? '';
  stateEl.className = 'state' + (h?.busy ? ' busy' : '') + (h?.down ? ' down' : '');
  usageEl.textContent = h?.usage ? `${formatTokens(h.usage.total)} tokens` : '';
  usageEl.title = h?.usage ? `Last turn: ${h.usage.prompt} prompt + ${h.usage.completion} completion tokens` : '';
  const busy = !!h?.busy;
  sendBtn.textContent = busy ? 'Stop' : 'Send';
  sendBtn.className = busy ? 'send stop' : 'send primary';
  sendBtn.title = busy ? 'Stop the turn (loom.cancel); text typed now is queued' : 'Send (Enter)';
  app.classList.toggle('busy', busy);
}

function formatTokens(n: number): string {
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function drawAll(): void {
  nodes.clear();
  log.replaceChildren();
  for (const it of state.items) {
    const n = render(it);
    nodes.set(it.id, n);
    log.append(n);
  }
  if (state.items.length === 0) {
    log.append(empty);
  }
  drawHeader(state.header);
  scrollDown(true);
}

function upsert(item: Item): void {
  const i = state.items.findIndex((x) => x.id === item.id);
  if (i >= 0) {
    state.items[i] = item;
  } else {
    state.items.push(item);
  }
  const near = nearBottom();
  const n = render(item);
  const old = nodes.get(item.id);
  if (old) {
    // Keep a card's output open or closed as the user left it.
    const details = (e: Element) => e instanceof HTMLDetailsElement ? e : e.querySelector('details');
    const wasOpen = details(old)?.open;
    const det = details(n);
    if (det && wasOpen !== undefined) {
      det.open = wasOpen;
    }
    old.replaceWith(n);
  } else {
    empty.remove();
    log.append(n);
  }
  nodes.set(item.id, n);
  scrollDown(near);
}

function nearBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function scrollDown(force: boolean): void {
  if (force) {
    log.scrollTop = log.scrollHeight;
  }
}

function render(it: Item): HTMLElement {
  switch (it.kind) {
    case 'user': {
      const d = el('div', 'msg user');
      d.dataset.id = it.id;
      const who = el('div', 'who', 'You');
      if (it.queued) {
        who.append(el('span', 'badge', 'queued'));
      }
      d.append(who, el('div', 'text', it.text));
      if (it.context) {
        d.append(el('div', 'context', it.context));
      }
      return d;
    }
    case 'assistant': {
      const d = el('div', 'msg assistant');
      d.dataset.id = it.id;
      const body = el('div', 'markdown');
      body.innerHTML = md.render(it.text);
      d.append(body);
      return d;
    }
    case 'thought': {
      // Folded, like the thinking of other agents: a click opens it.
      const d = el('details', 'thought');
      d.dataset.id = it.id;
      d.append(el('summary', '', 'Thinking'), el('div', 'text', it.text));
      return d;
    }
    case 'tool':
      return renderTool(it);
    case 'commit': {
      const d = el('div', 'commit');
      d.dataset.id = it.id;
      d.append(el('span', 'dot'), el('span', 'what', `Committed ${it.sha.slice(0, 7)}`), el('span', 'subject', it.message.split('\n')[0]));
      if (it.undone) {
        d.append(el('span', 'undone', it.undone));
        d.classList.add('is-undone');
      } else {
        d.append(button('Undo', 'link undo', () => post({ type: 'undo', sha: it.sha }), 'Revert this commit and its edits (loom.undo)'));
      }
      return d;
    }
    case 'notice': {
      const d = el('div', `notice ${it.level}`);
      d.dataset.id = it.id;
      d.append(el('span', 'text', it.text));
      if (it.action === 'openSettings') {
        d.append(button('Open Settings', 'secondary', () => post({ type: 'action', action: 'openSettings' })));
      } else if (it.action === 'installServer') {
        d.append(button('Install loom-lsp', 'secondary', () => post({ type: 'action', action: 'installServer' })));
      }
      return d;
    }
    case 'turnEnd': {
      const d = el('div', `turn-end ${it.outcome}`);
      d.dataset.id = it.id;
      let words = '';
      if (it.outcome === 'cancelled') {
        words = 'Stopped: the turn was cancelled.';
      } else if (it.outcome === 'failed') {
        words = 'The turn ended with an error.';
      }
      if (words) {
        d.append(el('span', 'words', words));
      }
      if (it.usage && it.usage.total > 0) {
        d.append(el('span', 'tokens', `${formatTokens(it.usage.total)} tokens`));
      }
      return d;
    }
  }
}

const statusWords: Record<string, string> = {
  streaming: 'preparing', pending: 'pending', running: 'running',
  succeeded: 'done', failed: 'failed', cancelled: 'cancelled',
};

function renderTool(it: Extract<Item, { kind: 'tool' }>): HTMLElement {
  const d = el('div', `card tool s-${it.status}`);
  d.dataset.id = it.id;
  d.dataset.tool = it.name;
  const head = el('div', 'card-head');
  head.append(el('span', 'status-dot'), el('span', 'tool-name', it.name));
  const t = el('code', 'tool-title', it.title);
  t.title = it.title;
  head.append(t, el('span', 'status-word', it.approval?.state === 'ask' ? 'needs approval' : statusWords[it.status]));
  d.append(head);

  const a = it.approval;
  if (a) {
    const row = el('div', 'approval');
    if (a.state === 'ask') {
      row.append(el('span', 'ask', `Run this ${it.name === 'bash' ? 'command' : 'tool'}?`),
        button('Allow', 'primary allow', () => post({ type: 'approve', id: a.id, answer: 'allow' })),
        button('Deny', 'secondary deny', () => post({ type: 'approve', id: a.id, answer: 'deny' })));
      if (a.always) {
        row.append(button('Always allow in this workspace', 'link always', () => post({ type: 'approve', id: a.id, answer: 'always' }), a.always));
      }
    } else {
      row.append(el('span', `answer ${a.state}`, a.state === 'allowed' ? 'Allowed' : 'Denied'));
    }
    d.append(row);
  }

  if (it.diff) {
    const det = el('details', 'diff');
    det.open = true;
    const sum = el('summary', undefined, 'Diff');
    sum.append(button('Open diff', 'link open-diff', () => post({ type: 'openDiff', itemId: it.id }), 'Open in VS Code\'s diff editor'));
    det.append(sum, renderDiff(it.diff));
    d.append(det);
  } else if (it.output || it.summary) {
    const det = el('details', 'output');
    det.open = it.status === 'running' || it.status === 'failed';
    const label = it.status === 'running' ? 'Output so far' : it.summary ? `Output · ${it.summary}` : 'Output';
    det.append(el('summary', undefined, label), el('pre', 'out', it.output || it.summary || ''));
    d.append(det);
  }
  if (it.path && !it.diff) {
    head.querySelector('.tool-title')?.addEventListener('click', () => post({ type: 'openFile', path: it.path! }));
    t.classList.add('clickable');
  }
  return d;
}

function renderDiff(diff: string): HTMLElement {
  const pre = el('pre', 'diff-body');
  for (const line of diff.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++') || line === '') {
      continue;
    }
    let cls = 'ctx';
    if (line.startsWith('@@')) {
      cls = 'hunk';
    } else if (line.startsWith('+')) {
      cls = 'add';
    } else if (line.startsWith('-')) {
      cls = 'del';
    }
    pre.append(el('div', cls, line));
  }
  return pre;
}

// --- messages from the extension ---------------------------------------------

window.addEventListener('message', (ev: MessageEvent<ToWebview>) => {
  const m = ev.data;
  switch (m.type) {
    case 'snapshot':
      state.folders = m.folders;
      state.header = m.header;
      state.items = m.items;
      drawAll();
      break;
    case 'upsert':
      if (m.folder === state.header?.folder) {
        upsert(m.item);
      }
      break;
    case 'header':
      state.header = m.header;
      drawHeader(m.header);
      break;
    case 'fill':
      input.value = m.text;
      state.draft = m.text;
      input.focus();
      break;
  }
  save();
});

drawAll();
post({ type: 'ready' });
input.focus();
