// The composer: the input, the attached chips, the slash-command
// completion and Send / Stop. Enter sends (queued during a turn); Stop
// and Escape stop the turn, whatever is typed; "@" or "#" (or Attach)
// attaches files, the selection, problems, the last terminal command or
// the git changes.
import type { ContextItem, SlashCommand } from '../shared/messages';
import { completeSlash, parseSlash } from '../slash';
import { button, el, post, save, state } from './dom';

const form = el('footer', 'composer');
const chipsBar = el('div', 'chips composer-chips');
chipsBar.setAttribute('aria-label', 'Attached');
const menu = el('ul', 'slash-menu');
menu.id = 'slash-menu';
menu.setAttribute('role', 'listbox');
menu.setAttribute('aria-label', 'Commands');
menu.hidden = true;
const row = el('div', 'composer-row');
const input = el('textarea', 'input');
input.rows = 3;
input.placeholder = 'Ask Loom… (Enter to send, @ to attach, / for commands)';
input.setAttribute('aria-label', 'Message to Loom');
input.setAttribute('aria-controls', menu.id);
const attachBtn = button('@', 'icon attach', () => post({ type: 'attach' }), 'Attach files, the selection, problems, terminal output or git changes (@ or #)');
attachBtn.setAttribute('aria-label', 'Attach');
const sendBtn = el('button', 'send primary', 'Send');
sendBtn.type = 'button';
row.append(input, attachBtn, sendBtn);
form.append(menu, chipsBar, row);

/** The composer element. */
export const composer = form;

let busy = false;
let matches: SlashCommand[] = [];
let selected = 0;

/** Focuses the input. */
export function focusInput(): void {
  input.focus();
}

/** Sets whether a turn runs: the button is Stop then. */
export function setBusy(b: boolean): void {
  busy = b;
  sendBtn.textContent = b ? 'Stop' : 'Send';
  sendBtn.className = b ? 'send stop' : 'send primary';
  sendBtn.title = b ? 'Stop the turn (Escape); Enter in the input queues a prompt' : 'Send (Enter)';
}

/** Puts text in the input (only when it holds ifText, if given). */
export function fill(text: string, ifText?: string): void {
  if (ifText !== undefined && input.value !== ifText) {
    return; // the user typed something else meanwhile: theirs stays
  }
  input.value = text;
  state.draft = text;
  save();
  input.focus();
}

/** Adds attachments (the answer to attach). */
export function addChips(items: ContextItem[]): void {
  for (const it of items) {
    if (!state.chips.some((c) => c.label === it.label)) {
      state.chips.push(it);
    }
  }
  drawChips();
  save();
  input.focus();
}

function drawChips(): void {
  chipsBar.replaceChildren(...state.chips.map((c, i) => {
    const chip = el('span', `chip chip-${c.kind}`);
    chip.append(el('span', 'chip-label', c.label));
    const x = button('×', 'chip-remove', () => {
      state.chips.splice(i, 1);
      drawChips();
      save();
      input.focus();
    }, `Remove ${c.label}`);
    x.setAttribute('aria-label', `Remove ${c.label}`);
    chip.append(x);
    return chip;
  }));
  chipsBar.hidden = state.chips.length === 0;
}

/** Stops the running turn (Stop, Escape). */
export function stop(by?: 'escape'): void {
  if (busy) {
    post(by ? { type: 'stop', by } : { type: 'stop' });
  }
}

function send(): void {
  const text = input.value.trim();
  const slash = parseSlash(text);
  if (slash) {
    post({ type: 'slash', name: slash.name, args: slash.args });
  } else if (text !== '') {
    post({ type: 'send', text, ...(state.chips.length ? { context: state.chips } : {}) });
    state.chips = [];
    drawChips();
  } else {
    return;
  }
  input.value = '';
  state.draft = '';
  closeMenu();
  save();
}

function drawMenu(): void {
  matches = completeSlash(input.value);
  if (matches.length === 0) {
    closeMenu();
    return;
  }
  selected = Math.min(selected, matches.length - 1);
  menu.replaceChildren(...matches.map((c, i) => {
    const li = el('li', 'slash-item' + (i === selected ? ' selected' : ''));
    li.id = `slash-${c.name}`;
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', String(i === selected));
    li.append(el('span', 'slash-name', `/${c.name}${c.args ? ' ' + c.args : ''}`), el('span', 'slash-help', c.help));
    li.addEventListener('mousedown', (ev) => {
      ev.preventDefault();
      selected = i;
      complete();
    });
    return li;
  }));
  menu.hidden = false;
  input.setAttribute('aria-activedescendant', `slash-${matches[selected].name}`);
}

function closeMenu(): void {
  menu.hidden = true;
  matches = [];
  selected = 0;
  input.removeAttribute('aria-activedescendant');
}

/** Completes the selected command: runs it, or waits for its argument. */
function complete(): void {
  const c = matches[selected];
  if (!c) {
    return;
  }
  input.value = `/${c.name}${c.args ? ' ' : ''}`;
  closeMenu();
  if (!c.args) {
    send();
  }
}

input.value = state.draft;
drawChips();
input.addEventListener('input', (ev) => {
  const ie = ev as InputEvent;
  // "@" or "#" typed at the start or after a space: attach.
  const at = input.selectionStart ?? 0;
  const typed = ie.data;
  if ((typed === '@' || typed === '#') && (at === 1 || /\s/.test(input.value[at - 2] ?? ''))) {
    input.value = input.value.slice(0, at - 1) + input.value.slice(at);
    input.setSelectionRange(at - 1, at - 1);
    post({ type: 'attach' });
  }
  state.draft = input.value;
  save();
  drawMenu();
});
input.addEventListener('keydown', (ev) => {
  if (!menu.hidden && matches.length > 0) {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      selected = (selected + (ev.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length;
      drawMenu();
      return;
    }
    if (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey && completeSlash(input.value).length > 0 && !parseSlash(input.value))) {
      ev.preventDefault();
      complete();
      return;
    }
    if (ev.key === 'Escape') {
      ev.preventDefault();
      ev.stopPropagation();
      closeMenu();
      return;
    }
  }
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send();
  }
});
input.addEventListener('blur', () => setTimeout(closeMenu, 150));
sendBtn.addEventListener('click', () => {
  // While a turn runs the button is Stop, whatever is typed.
  if (busy) {
    stop();
  } else {
    send();
  }
});
