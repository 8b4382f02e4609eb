// A unified diff drawn as coloured rows: the edit card's hunks
// (editcard.ts) and a finished edit's diff (toolcard.ts) both use it.
import { el } from './dom';

/** A unified diff, one line per row, coloured. */
export function renderDiff(diff: string): HTMLElement {
  const pre = el('pre', 'diff-body');
  pre.tabIndex = 0;
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
