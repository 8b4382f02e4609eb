// The header's conversation row: a button that names the conversation
// shown (and how many others are running) and opens the list of the
// folder's conversations: title, when, running / waiting badges; open,
// rename (inline) and delete (after a confirmation). Keyboard: Tab and
// the arrows move, Enter opens, Escape closes (never stopping the turn).
import type { ConversationEntry, Header } from '../shared/messages';
import { relativeTime } from '../reltime';
import { button, el, post } from './dom';

const row = el('div', 'conv-bar');
const toggle = button('', 'conv-toggle', () => setOpen(!isOpen()), 'Conversations of this folder');
toggle.id = 'conv-toggle';
toggle.setAttribute('aria-haspopup', 'true');
toggle.setAttribute('aria-expanded', 'false');
toggle.setAttribute('aria-controls', 'conv-menu');
const toggleTitle = el('span', 'conv-title');
const toggleRunning = el('span', 'conv-running');
const caret = el('span', 'conv-caret', '▾');
caret.setAttribute('aria-hidden', 'true');
toggle.append(toggleTitle, toggleRunning, caret);
const menu = el('div', 'conv-menu');
menu.id = 'conv-menu';
menu.setAttribute('role', 'region');
menu.setAttribute('aria-label', 'Conversations');
menu.hidden = true;
const listEl = el('ul', 'conv-list');
const newBtn = button('+ New conversation', 'link conv-new', () => {
  setOpen(false);
  post({ type: 'newConversation' });
}, 'Start a conversation beside these (they go on running)');
menu.append(newBtn, listEl);
row.append(toggle);

/** The conversation row and its list (put them under the header bar). */
export const conversationBar = row;
export const conversationMenu = menu;

let entries: ConversationEntry[] = [];
let title = '';
/** The row being renamed or asked to confirm a delete, if any. */
let editing: { id: string; mode: 'rename' | 'delete' } | undefined;

function isOpen(): boolean {
  return !menu.hidden;
}

function setOpen(open: boolean, focusToggle = false): void {
  menu.hidden = !open;
  toggle.setAttribute('aria-expanded', String(open));
  editing = undefined;
  if (open) {
    drawList();
    post({ type: 'listConversations' });
    (listEl.querySelector<HTMLButtonElement>('.conv-open.current') ?? newBtn).focus();
  } else if (focusToggle) {
    toggle.focus();
  }
}

/** Draws the conversation shown (from the header). */
export function drawConversationTitle(h: Header | undefined): void {
  title = h?.title || 'New conversation';
  toggleTitle.textContent = title;
  drawToggle();
}

/** Draws the folder's conversations. */
export function drawConversations(items: ConversationEntry[]): void {
  entries = items;
  drawToggle();
  if (isOpen()) {
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.focusKey : undefined;
    drawList();
    if (focused) {
      listEl.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
    }
  }
}

function drawToggle(): void {
  const others = entries.filter((c) => !c.current && (c.running || c.waiting)).length;
  toggleRunning.textContent = others > 0 ? `${others} other${others > 1 ? 's' : ''} running` : '';
  toggleRunning.hidden = others === 0;
  toggle.setAttribute('aria-label', `Conversation: ${title}${others > 0 ? `; ${others} other running` : ''}. Show the conversations`);
}

function drawList(): void {
  const now = Date.now();
  listEl.replaceChildren(...entries.map((c) => {
    const li = el('li', 'conv-item' + (c.current ? ' current' : ''));
    li.dataset.id = c.id;
    if (editing?.id === c.id && editing.mode === 'rename') {
      li.append(renameForm(c));
    } else if (editing?.id === c.id && editing.mode === 'delete') {
      li.append(deleteConfirm(c));
    } else {
      li.append(...itemRow(c, now));
    }
    return li;
  }));
  if (entries.length === 0) {
    listEl.append(el('li', 'conv-empty', 'No conversation yet.'));
  }
}

function itemRow(c: ConversationEntry, now: number): HTMLElement[] {
  const when = relativeTime(c.updated, now);
  const state = c.waiting ? 'waiting for approval' : c.running ? 'running' : '';
  const open = button('', 'conv-open' + (c.current ? ' current' : ''), () => {
    setOpen(false);
    if (!c.current) {
      post({ type: 'openConversation', id: c.id });
    }
  });
  open.dataset.focusKey = 'open:' + c.id;
  const name = el('span', 'conv-name', c.title);
  const meta = el('span', 'conv-meta', [when, c.turns > 0 ? `${c.turns} turn${c.turns > 1 ? 's' : ''}` : '',
    c.elsewhere ? 'open in another loom process' : ''].filter(Boolean).join(' · '));
  open.append(name, meta);
  if (state) {
    open.append(el('span', 'badge conv-state' + (c.waiting ? ' waiting' : ''), state));
  }
  // The accessible name is the visible text (title, when, turns, badge); aria-current marks the one shown.
  if (c.current) {
    open.setAttribute('aria-current', 'true');
  }
  const out: HTMLElement[] = [open];
  if (!c.elsewhere) {
    const rename = button('✎', 'icon conv-rename', () => edit(c.id, 'rename'), `Rename “${c.title}”`);
    rename.setAttribute('aria-label', `Rename ${c.title}`);
    rename.dataset.focusKey = 'rename:' + c.id;
    const del = button('✕', 'icon conv-delete', () => edit(c.id, 'delete'), `Delete “${c.title}”`);
    del.setAttribute('aria-label', `Delete ${c.title}`);
    del.dataset.focusKey = 'delete:' + c.id;
    out.push(rename, del);
  } else {
    open.disabled = true;
    open.title = 'Open in another loom process';
  }
  return out;
}

function edit(id: string, mode: 'rename' | 'delete'): void {
  editing = { id, mode };
  drawList();
  listEl.querySelector<HTMLElement>(mode === 'rename' ? '.conv-rename-input' : '.conv-cancel')?.focus();
}

function stopEditing(id: string): void {
  editing = undefined;
  drawList();
  listEl.querySelector<HTMLElement>(`[data-focus-key="open:${CSS.escape(id)}"]`)?.focus();
}

function renameForm(c: ConversationEntry): HTMLElement {
  const form = el('form', 'conv-rename-form');
  const input = el('input', 'conv-rename-input');
  input.type = 'text';
  input.value = c.title;
  input.setAttribute('aria-label', `New title for ${c.title}`);
  const save = el('button', 'primary conv-save', 'Rename');
  save.type = 'submit';
  const cancel = button('Cancel', 'secondary conv-cancel', () => stopEditing(c.id));
  form.append(input, save, cancel);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    editing = undefined;
    if (t !== c.title) {
      // Drawn at once; the server's list confirms it.
      entries = entries.map((x) => x.id === c.id ? { ...x, title: t || x.title } : x);
      post({ type: 'renameConversation', id: c.id, title: t });
    }
    stopEditing(c.id);
  });
  return form;
}

function deleteConfirm(c: ConversationEntry): HTMLElement {
  const box = el('div', 'conv-confirm');
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `Delete ${c.title}?`);
  const q = el('span', 'conv-question', `Delete “${c.title}”?${c.running ? ' Its turn is stopped.' : ''}`);
  const yes = button('Delete', 'primary conv-confirm-delete', () => {
    editing = undefined;
    entries = entries.filter((x) => x.id !== c.id);
    drawList();
    newBtn.focus();
    post({ type: 'deleteConversation', id: c.id });
  });
  const no = button('Cancel', 'secondary conv-cancel', () => stopEditing(c.id));
  box.append(q, yes, no);
  return box;
}

// Escape closes the list (or an edit in it) and never reaches the
// panel's Escape, which stops the running turn.
menu.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') {
    ev.preventDefault();
    ev.stopPropagation();
    if (editing) {
      stopEditing(editing.id);
    } else {
      setOpen(false, true);
    }
    return;
  }
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    const opens = [newBtn, ...Array.from(listEl.querySelectorAll<HTMLButtonElement>('.conv-open:not(:disabled)'))];
    const i = opens.indexOf(document.activeElement as HTMLButtonElement);
    if (i >= 0 || ev.key === 'ArrowDown') {
      ev.preventDefault();
      const next = opens[(i + (ev.key === 'ArrowDown' ? 1 : -1) + opens.length) % opens.length];
      next?.focus();
    }
  }
});
toggle.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && isOpen()) {
    ev.preventDefault();
    ev.stopPropagation();
    setOpen(false);
  } else if (ev.key === 'ArrowDown' && !isOpen()) {
    ev.preventDefault();
    setOpen(true);
  }
});
