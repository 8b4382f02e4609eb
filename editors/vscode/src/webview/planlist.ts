// The todo list the model keeps (loom/plan), above the input: folded to
// its summary ("Plan 1/3 · ▸ the current step") or open as a checklist,
// the step in progress highlighted. Hidden when there is no list.
import type { PlanStep } from '../shared/messages';
import { el, save, state } from './dom';

const box = el('details', 'plan-list');
box.hidden = true;
const summary = el('summary', 'plan-summary');
const list = el('ol', 'plan-steps');
list.setAttribute('aria-label', 'The plan');
box.append(summary, list);
box.open = true;
box.addEventListener('toggle', () => {
  state.planFolded = !box.open;
  save();
});

/** The checklist element. */
export const planList = box;

const marks: Record<PlanStep['status'], string> = { completed: '✓', in_progress: '▸', pending: '○' };
const words: Record<PlanStep['status'], string> = { completed: 'done', in_progress: 'in progress', pending: 'to do' };

/** Draws steps (none: hidden). */
export function drawPlanList(steps: readonly PlanStep[] | undefined): void {
  const items = steps ?? [];
  box.hidden = items.length === 0;
  if (items.length === 0) {
    list.replaceChildren();
    return;
  }
  box.open = !state.planFolded;
  const done = items.filter((s) => s.status === 'completed').length;
  const current = items.find((s) => s.status === 'in_progress');
  summary.replaceChildren(el('span', 'plan-title', `Plan ${done}/${items.length}`));
  if (current) {
    summary.append(el('span', 'plan-now', `▸ ${current.step}`));
  }
  list.replaceChildren(...items.map((s) => {
    const li = el('li', `plan-step ${s.status}`);
    if (s.status === 'in_progress') {
      li.setAttribute('aria-current', 'step');
    }
    const mark = el('span', 'plan-mark', marks[s.status] ?? '○');
    mark.setAttribute('aria-hidden', 'true');
    li.append(mark, el('span', 'plan-text', s.step), el('span', 'sr-only', ` (${words[s.status] ?? s.status})`));
    return li;
  }));
}
