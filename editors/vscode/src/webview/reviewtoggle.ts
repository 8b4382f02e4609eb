// The header's toggle "Review edits before they apply": tools.edits
// "review" (every change waits for the user's decision in its card) or
// "auto" (edits apply at once), written to the workspace settings by the
// extension; it shows the value in force (loom.status, else the setting).
// (A header redraw while the setting is on its way may show the old
// value; the server's "configuration reloaded" brings the new one.)
import type { Header } from '../shared/messages';
import { el, post } from './dom';

const label = el('label', 'review-toggle');
const box = el('input');
box.type = 'checkbox';
box.setAttribute('aria-label', 'Review edits before they apply');
label.title = 'Review edits before they apply: each change the agent proposes waits for your Accept / Reject (loom.tools.edits = review); off: edits apply at once (auto)';
label.append(box, el('span', undefined, 'Review edits'));
// The box shows what the server has in force: a click asks for the other
// value, and the box changes when loom.status says so (an untrusted
// folder's .loom.toml may keep review on).
box.addEventListener('change', () => {
  const on = box.checked;
  box.checked = !on;
  box.setAttribute('aria-busy', 'true');
  post({ type: 'review', intent: { kind: 'toggle', on } });
});

/** The toggle's element, for the header. */
export const reviewToggle = label;

/** Shows h's value (hidden while no folder is open). */
export function drawReviewToggle(h: Header | undefined): void {
  box.checked = !!h?.reviewEdits;
  box.removeAttribute('aria-busy');
  label.hidden = !h?.folder;
}
