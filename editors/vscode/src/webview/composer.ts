// The composer: the input, the attached chips, the slash-command
// completion and Send / Stop. Enter sends (queued during a turn); Stop
// and Escape stop the turn, whatever is typed; "@" or "#" (or Attach)
// attaches files, the selection, problems, the last terminal command or
// the git changes; pictures pasted or dropped into it go with the prompt
// (thumbnail chips); the mode selector switches the conversation's mode.
import { imageLabel, PastedImage, refuseImage } from '../shared/images';
import type { ContextItem, Header, Mode, SlashCommand } from '../shared/messages';
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
const tools = el('div', 'composer-tools');
const modePick = el('select', 'mode-picker');
modePick.setAttribute('aria-label', 'Mode');
modePick.title = 'Agent edits and runs commands; Plan and Ask only read (Plan proposes a plan for your approval)';
for (const [value, label] of [['agent', 'Agent'], ['plan', 'Plan'], ['ask', 'Ask']] as const) {
  const o = el('option', undefined, label);
  o.value = value;
  modePick.append(o);
}
modePick.addEventListener('change', () => post({ type: 'setMode', mode: modePick.value as Mode }));
const imageNote = el('span', 'image-note');
imageNote.setAttribute('role', 'status');
tools.append(modePick, imageNote);
form.append(menu, chipsBar, row, tools);

/** The composer element. */
export const composer = form;

let busy = false;
/** The pictures pasted or dropped, not sent yet (kept in memory only: they may be large). */
let images: (PastedImage & { url: string })[] = [];
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

/** Draws the mode selector (shown when the server switches modes). */
export function drawMode(h: Header | undefined): void {
  tools.hidden = !h?.modes;
  modePick.value = h?.mode ?? 'agent';
  form.classList.toggle('read-only-mode', !!h?.modes && h.mode !== undefined && h.mode !== 'agent');
}

/** Adds pictures (pasted or dropped), refusing what the server would refuse, with why. */
function addImages(files: readonly File[]): void {
  const why: string[] = [];
  let pending = 0;
  for (const f of files) {
    const refused = refuseImage(f.name || 'the picture', f.type, f.size, images.length + pending);
    if (refused) {
      why.push(refused);
      continue;
    }
    pending++;
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      const n = images.length + 1;
      const name = f.name && f.name !== 'image.png' ? f.name : `pasted-${n}.${f.type.split('/')[1] ?? 'png'}`;
      images.push({ name, mime: f.type, size: f.size, data: url.slice(url.indexOf(',') + 1), url });
      drawChips();
    };
    reader.readAsDataURL(f);
  }
  imageNote.textContent = why.join(' ');
}

function drawChips(): void {
  const pics = images.map((img, i) => {
    const chip = el('span', 'chip chip-image');
    const thumb = el('img', 'chip-thumb');
    thumb.src = img.url;
    thumb.alt = '';
    chip.append(thumb, el('span', 'chip-label', imageLabel(img)));
    const x = button('×', 'chip-remove', () => {
      images.splice(i, 1);
      drawChips();
      input.focus();
    }, `Remove ${img.name}`);
    x.setAttribute('aria-label', `Remove ${img.name}`);
    chip.append(x);
    return chip;
  });
  chipsBar.replaceChildren(...pics, ...state.chips.map((c, i) => {
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
  chipsBar.hidden = state.chips.length === 0 && images.length === 0;
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
    const pics = images.map(({ name, mime, size, data }) => ({ name, mime, size, data }));
    post({ type: 'send', text, ...(state.chips.length ? { context: state.chips } : {}), ...(pics.length ? { images: pics } : {}) });
    state.chips = [];
    images = [];
    imageNote.textContent = '';
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
  matches = completeSlash(input.value, state.header?.commands);
  if (matches.length === 0) {
    closeMenu();
    return;
  }
  selected = Math.min(selected, matches.length - 1);
  menu.replaceChildren(...matches.map((c, i) => {
    const li = el('li', 'slash-item' + (i === selected ? ' selected' : ''));
    li.id = `slash-${c.name.replace(/[^\w-]/g, '_')}`;
    if (c.custom) {
      li.classList.add('custom');
    }
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
  input.setAttribute('aria-activedescendant', `slash-${matches[selected].name.replace(/[^\w-]/g, '_')}`);
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
  // A custom command is sent as a prompt: the user may add words first.
  input.value = `/${c.name}${c.args || c.custom ? ' ' : ''}`;
  state.draft = input.value;
  closeMenu();
  if (!c.args && !c.custom) {
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
    if (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey && matches.length > 0 && !parseSlash(input.value))) {
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
// Pictures: pasted (a screenshot from the clipboard) or dropped on the composer.
input.addEventListener('paste', (ev) => {
  const files = Array.from(ev.clipboardData?.files ?? []).filter((f) => f.type.startsWith('image/') || f.type === '');
  if (files.length > 0) {
    ev.preventDefault();
    addImages(files);
  }
});
form.addEventListener('dragover', (ev) => {
  if (ev.dataTransfer?.types.includes('Files')) {
    ev.preventDefault();
    form.classList.add('dropping');
  }
});
form.addEventListener('dragleave', () => form.classList.remove('dropping'));
form.addEventListener('drop', (ev) => {
  form.classList.remove('dropping');
  const files = Array.from(ev.dataTransfer?.files ?? []);
  if (files.length > 0) {
    ev.preventDefault();
    addImages(files);
  }
});
sendBtn.addEventListener('click', () => {
  // While a turn runs the button is Stop, whatever is typed.
  if (busy) {
    stop();
  } else {
    send();
  }
});
