// The header's toggle "Review edits before they apply": tools.edits
// "review" (every change waits for the user's decision in its card) or
// "auto" (edits apply at once), written to the workspace settings by the
// extension; it shows the value in force (loom.status, else the setting).
import type { Header } from '../shared/messages';
import { el, post } from './dom';

const label = el('label', 'review-toggle');
const box = el('input');
box.type = 'checkbox';
box.setAttribute('aria-label', 'Review edits before they apply');
label.title = 'Review edits before they apply: each change the agent proposes waits for your Accept / Reject (loom.tools.edits = review); off: edits apply at once (auto)';
label.append(box, el('span', undefined, 'Review edits'));
box.addEventListener('change', () => post({ type: 'review', intent: { kind: 'toggle', on: box.checked } }));

/** The toggle's element, for the header. */
export const reviewToggle = label;

/** Shows h's value (hidden while no folder is open). */
export function drawReviewToggle(h: Header | undefined): void {
  box.checked = !!h?.reviewEdits;
  label.hidden = !h?.folder;
}
