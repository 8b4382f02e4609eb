// The changed-files bar above the input (as Copilot's "N files
// changed"): the files the agent changed since the user last kept them,
// and the files commands changed and nobody kept or discarded yet. Each
// file: its name (opens the diff), +N −M, Keep / Undo (Keep / Discard
// for a command's change); Keep all / Undo all for the whole bar.
import type { BarAction, BarFile } from '../shared/messages';
import { splitPath } from '../shared/paths';
import { button, el, post } from './dom';

const bar = el('section', 'filesbar');
bar.setAttribute('aria-label', 'Changed files');
bar.hidden = true;
const head = el('div', 'fb-head');
const toggle = el('button', 'fb-toggle');
toggle.type = 'button';
toggle.setAttribute('aria-expanded', 'true');
const list = el('ul', 'fb-list');
list.id = 'fb-list';
list.setAttribute('aria-label', 'Files');
toggle.setAttribute('aria-controls', list.id);
const totals = el('span', 'fb-totals');
const keepAll = button('Keep all', 'secondary fb-keep-all', () => act('keep'), 'Keep every change of the list (commits the commands\' changes)');
const undoAll = button('Undo all', 'secondary fb-undo-all', () => act('undo'), "Take back the agent's changes to every file of the list (your own edits stay) and discard the commands' changes");
head.append(toggle, totals, keepAll, undoAll);
bar.append(head, list);
toggle.addEventListener('click', () => {
  const open = toggle.getAttribute('aria-expanded') !== 'true';
  toggle.setAttribute('aria-expanded', String(open));
  list.hidden = !open;
});

/** The bar's element, placed above the composer. */
export const filesBar = bar;

/** The files drawn, kept for the keyboard's focus after a redraw. */
let drawn: BarFile[] = [];

function act(action: BarAction, paths?: string[]): void {
  // Until the extension answers with the new list, the buttons wait.
  for (const b of Array.from(bar.querySelectorAll<HTMLButtonElement>('button:not(.fb-toggle)'))) {
    if (!paths || paths.includes(b.closest<HTMLElement>('.fb-file')?.dataset.path ?? '') || b.classList.contains('fb-keep-all') || b.classList.contains('fb-undo-all')) {
      if (action !== 'diff') {
        b.disabled = true;
      }
    }
  }
  post({ type: 'bar', action, paths });
}

/** Draws the bar (hidden when files is empty). */
export function drawFilesBar(files: BarFile[]): void {
  const focused = document.activeElement instanceof HTMLElement && bar.contains(document.activeElement)
    ? { path: document.activeElement.closest<HTMLElement>('.fb-file')?.dataset.path, cls: document.activeElement.className } : undefined;
  drawn = files;
  bar.hidden = files.length === 0;
  const n = files.length;
  toggle.textContent = `${n} file${n === 1 ? '' : 's'} changed`;
  const added = files.reduce((s, f) => s + f.added, 0);
  const removed = files.reduce((s, f) => s + f.removed, 0);
  totals.replaceChildren(...counts(added, removed));
  keepAll.disabled = false;
  undoAll.disabled = false;
  list.replaceChildren(...files.map(row));
  if (focused) {
    // Keep the keyboard where it was: the same file's button, else the next file, else the header.
    const same = Array.from(list.querySelectorAll<HTMLElement>('.fb-file')).find((li) => li.dataset.path === focused.path);
    const target = same?.querySelector<HTMLElement>(`button.${focused.cls.split(' ').filter((c) => c.startsWith('fb-')).join('.')}`)
      ?? list.querySelector<HTMLElement>('.fb-file button') ?? (bar.hidden ? undefined : toggle);
    target?.focus();
  }
}

/** The files drawn now. */
export function barFiles(): BarFile[] {
  return drawn;
}

function row(f: BarFile): HTMLLIElement {
  const li = el('li', `fb-file fb-${f.source}`);
  li.dataset.path = f.path;
  const slash = f.path.lastIndexOf('/');
  const name = slash >= 0 ? f.path.slice(slash + 1) : f.path;
  // The whole path on one line, cut in the middle when the bar is narrow:
  // the start of the path gives way first (an ellipsis where it is cut),
  // the file's name last; the tooltip has the whole path.
  const [lead, tail] = splitPath(f.path);
  const open = button('', 'link fb-name', () => act('diff', [f.path]), `${f.path}\nOpen the diff: before ${f.source === 'agent' ? "the agent's change" : 'the command'} ↔ now`);
  if (lead) {
    open.append(el('span', 'fb-lead', lead));
  }
  open.append(el('span', 'fb-tail', tail));
  open.setAttribute('aria-label', `${name}: open the diff of ${f.path}`);
  li.append(open);
  if (f.source === 'command') {
    // Drawn under the file, on a line of its own (style.css: order): a long command never pushes Keep / Discard away.
    const badge = el('span', 'fb-badge fb-command', `command: ${f.command ?? ''}`.trim());
    badge.title = f.command ?? '';
    li.append(badge);
  }
  if (f.created) {
    li.append(el('span', 'fb-badge', 'new'));
  } else if (f.deleted) {
    li.append(el('span', 'fb-badge', 'deleted'));
  }
  const stat = el('span', 'fb-stat');
  stat.append(...(f.binary ? [el('span', 'fb-binary', 'binary')] : counts(f.added, f.removed)));
  li.append(stat);
  const keep = button('Keep', 'secondary fb-keep', () => act('keep', [f.path]),
    f.source === 'command' ? `Keep ${f.path}: commit the command's change (loom.commit)` : `Keep ${f.path}: the change stays (it is committed already)`);
  keep.setAttribute('aria-label', `Keep ${f.path}`);
  const word = f.source === 'command' ? 'Discard' : 'Undo';
  const undo = button(word, 'secondary fb-undo', () => act('undo', [f.path]),
    f.source === 'command' ? `Discard ${f.path}: take the command's change back; your own edits stay (loom.discard)` : `Undo the agent's changes to ${f.path}; your own edits stay (loom.undoFile)`);
  undo.setAttribute('aria-label', `${word} ${f.path}`);
  li.append(keep, undo);
  return li;
}

/** "+3 −1" with the words a screen reader says. */
function counts(added: number, removed: number): HTMLElement[] {
  const a = el('span', 'fb-added', `+${added}`);
  a.title = `${added} line${added === 1 ? '' : 's'} added`;
  const r = el('span', 'fb-removed', `−${removed}`);
  r.title = `${removed} line${removed === 1 ? '' : 's'} removed`;
  return [a, r];
}
