// The chat panel's script (bundled to dist/webview.js, runs in the
// webview). It draws what the extension sends (src/shared/messages.ts)
// and posts the user's actions back. The conversation is a role=log
// region; prompts typed during a turn wait in a queue drawn after it.
import type { Item, ToWebview } from '../shared/messages';
import { addChips, composer, drawMode, fill, focusInput, setBusy, stop } from './composer';
import { conversationBar, conversationMenu, drawConversations, drawConversationTitle } from './conversations';
import { el, post, save, state } from './dom';
import { drawFilesBar, filesBar } from './filesbar';
import { drawHeader, headerBar } from './header';
import { render, updateInPlace } from './items';
import { drawPlanList, planList } from './planlist';
import { setupCard, setupModels } from './setup';

const app = document.getElementById('app')!;
const log = el('main', 'log');
log.setAttribute('role', 'log');
log.setAttribute('aria-live', 'polite');
log.setAttribute('aria-label', 'Conversation');
log.tabIndex = 0;
const list = el('div', 'items');
const queue = el('div', 'queue');
queue.setAttribute('role', 'group');
queue.setAttribute('aria-label', 'Queued prompts');
log.append(list, queue);
const empty = el('div', 'empty');
empty.innerHTML = '<h2>Loom</h2><p>Ask about this workspace, or ask for a change. Loom reads and edits files, runs commands when you allow it, and commits what it changed.</p>';
setupCard.hidden = true;
// The bar shows above the input (style.css: order) but comes after it in
// the tab order: Shift+Tab from the input still reaches an approval's Deny first.
app.append(headerBar, conversationBar, conversationMenu, log, setupCard, planList, composer, filesBar);

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

// Escape anywhere in the panel stops the running turn (the extension
// keeps a change that waits for the user's review: Escape stops the
// model, not the review).
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && !ev.defaultPrevented) {
    stop('escape');
  }
});

const nodes = new Map<string, HTMLElement>();

function drawChrome(): void {
  const h = state.header;
  drawHeader(h);
  drawConversationTitle(h);
  setBusy(!!h?.busy);
  drawMode(h);
  drawPlanList(h?.plan);
  app.classList.toggle('busy', !!h?.busy);
  setupCard.hidden = !h?.setup;
}

function drawAll(): void {
  nodes.clear();
  list.replaceChildren();
  queue.replaceChildren();
  for (const it of state.items) {
    const n = render(it);
    nodes.set(it.id, n);
    (isQueued(it) ? queue : list).append(n);
  }
  if (state.items.length === 0) {
    list.append(empty);
  }
  drawChrome();
  log.scrollTop = log.scrollHeight;
}

function isQueued(it: Item): boolean {
  return it.kind === 'user' && !!it.queued;
}

function upsert(item: Item): void {
  const i = state.items.findIndex((x) => x.id === item.id);
  const was = i >= 0 ? state.items[i] : undefined;
  if (i >= 0) {
    state.items.splice(i, 1);
  }
  // The order of state.items is the order drawn: the conversation, then the queue.
  if (isQueued(item)) {
    state.items.push(item);
  } else {
    const firstQueued = state.items.findIndex(isQueued);
    state.items.splice(firstQueued < 0 ? state.items.length : firstQueued, 0, item);
  }
  const near = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  const old = nodes.get(item.id);
  const moved = was !== undefined && isQueued(was) !== isQueued(item);
  if (old && !moved && updateInPlace(old, item)) {
    // Streamed text: the node stays, the new words are added.
  } else {
    const n = render(item);
    if (old) {
      // Keep a card's output open or closed as the user left it.
      const details = (e: Element) => e instanceof HTMLDetailsElement ? e : e.querySelector('details');
      const wasOpen = details(old)?.open;
      const det = details(n);
      if (det && wasOpen !== undefined) {
        det.open = wasOpen;
      }
    }
    // A control the user was on (data-focus-key) keeps the focus through a redraw.
    const focusKey = old?.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.focusKey : undefined;
    if (old && !moved) {
      old.replaceWith(n);
      if (focusKey) {
        n.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
      }
    } else {
      old?.remove();
      empty.remove();
      (isQueued(item) ? queue : list).append(n);
    }
    nodes.set(item.id, n);
    if (item.kind === 'tool' && (item.approval?.state === 'ask' || (item.review?.state === 'open' && !(was?.kind === 'tool' && was.review)))) {
      // An approval below the fold comes into view.
      n.scrollIntoView({ block: 'nearest' });
      return;
    }
  }
  if (near) {
    log.scrollTop = log.scrollHeight;
  }
}

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
      // Only the shown conversation's items (another's wait until it is shown).
      if (m.folder === state.header?.folder && (m.conversation ?? '') === (state.header?.conversation ?? '')) {
        upsert(m.item);
      }
      break;
    case 'header':
      state.header = m.header;
      drawChrome();
      break;
    case 'conversations':
      if (m.folder === state.header?.folder) {
        drawConversations(m.items);
      }
      break;
    case 'fill':
      fill(m.text, m.ifText);
      break;
    case 'chips':
      addChips(m.items);
      break;
    case 'focus':
      focusInput();
      break;
    case 'setupModels':
      setupModels(m.models, m.error);
      break;
    case 'filesBar':
      if (m.folder === state.header?.folder) {
        drawFilesBar(m.files);
      }
      break;
  }
  save();
});

drawAll();
post({ type: 'ready' });
// The input takes the keyboard only when the panel has it: a panel that
// loads (after a window reload) while the user types in the command
// palette or an editor must not steal their keystrokes (and their Enter,
// which would send them as a prompt). Ctrl+Alt+L posts 'focus'.
if (document.hasFocus()) {
  focusInput();
}
