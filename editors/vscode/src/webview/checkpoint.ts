// Restore checkpoint on each of the user's prompts: a button that opens
// a small menu (files and conversation / files only / conversation only,
// Cancel); the choice goes to the extension, which rewinds (loom.rewind)
// and says the result in the chat with a Redo.
import { restoreChoices } from '../restore';
import { button, el, post } from './dom';

let seq = 0;

/** The Restore checkpoint control of the prompt item itemId (turn: its turn, for the words). */
export function restoreControl(itemId: string): HTMLElement {
  const wrap = el('div', 'checkpoint');
  const menu = el('div', 'checkpoint-menu');
  menu.id = `checkpoint-menu-${++seq}`;
  menu.setAttribute('role', 'group');
  menu.setAttribute('aria-label', 'Restore to before this prompt');
  menu.hidden = true;
  const open = button('Restore checkpoint', 'link restore-checkpoint', () => show(menu.hidden),
    'Go back to before this prompt: the files, the conversation or both');
  open.setAttribute('aria-expanded', 'false');
  open.setAttribute('aria-controls', menu.id);
  const show = (on: boolean) => {
    menu.hidden = !on;
    open.setAttribute('aria-expanded', String(on));
    if (on) {
      menu.querySelector<HTMLButtonElement>('button')?.focus();
    }
  };
  for (const c of restoreChoices) {
    const b = button(c.label, 'secondary', () => {
      show(false);
      open.focus();
      post({ type: 'restore', itemId, restore: c.restore });
    }, c.detail);
    b.dataset.restore = c.restore;
    menu.append(b);
  }
  menu.append(button('Cancel', 'link', () => {
    show(false);
    open.focus();
  }));
  menu.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      // Closes the menu; it does not stop a turn.
      ev.preventDefault();
      ev.stopPropagation();
      show(false);
      open.focus();
    }
  });
  wrap.append(open, menu);
  return wrap;
}
