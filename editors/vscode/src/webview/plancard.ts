// The plan card: a plan the model proposes in plan mode, drawn as
// Markdown with the user's answers while it waits: Build it, Build in a
// new conversation, Edit (the plan in a text box, then Build this
// version) and Keep planning (with a comment the model reads). Once
// decided, it says what was decided.
import type { Item } from '../shared/messages';
import { button, el, post } from './dom';
import { renderMarkdown } from './markdown';

type PlanItem = Extract<Item, { kind: 'plan' }>;

const stateWords: Record<PlanItem['state'], string> = {
  open: 'waiting for your decision', accepted: 'accepted', fresh: 'accepted in a new conversation',
  rejected: 'not accepted', closed: 'not decided: the turn ended',
};

/** The card of a proposed plan. */
export function renderPlanCard(it: PlanItem): HTMLElement {
  const d = el('section', `card plan-card s-${it.state}`);
  d.dataset.id = it.id;
  d.setAttribute('aria-label', 'Proposed plan');
  const head = el('div', 'card-head');
  head.append(el('span', 'status-dot'), el('span', 'tool-name', 'Proposed plan'), el('span', 'spacer'), el('span', 'status-word', stateWords[it.state]));
  const body = el('div', 'markdown plan-body');
  body.innerHTML = renderMarkdown(it.plan);
  d.append(head, body);
  if (it.answer && it.state !== 'open') {
    d.append(el('div', 'plan-answer', it.answer));
  }
  if (it.state === 'open') {
    d.append(actions(it, d, body));
  }
  return d;
}

function decide(it: PlanItem, answer: { accept: boolean; fresh?: boolean; plan?: string; comment?: string }): void {
  post({ type: 'decidePlan', itemId: it.id, ...answer });
}

/** The open card's buttons, and the edit and comment boxes they open. */
function actions(it: PlanItem, card: HTMLElement, body: HTMLElement): HTMLElement {
  const bar = el('div', 'plan-actions');
  const build = button('Build it', 'primary plan-build', () => decide(it, { accept: true }), 'Accept the plan: agent mode, and the model carries it out');
  build.dataset.focusKey = `plan-build-${it.id}`;
  const fresh = button('Build in a new conversation', 'secondary plan-fresh', () => decide(it, { accept: true, fresh: true }),
    'Accept the plan and carry it out in a new conversation whose first prompt is the plan (a clean context)');
  const edit = button('Edit', 'secondary plan-edit', () => openEdit(it, card, body, bar), 'Edit the plan, then build your version');
  const keep = button('Keep planning', 'secondary plan-keep', () => openComment(it, card, bar), 'Do not build it: tell the model what to change');
  bar.append(build, fresh, edit, keep);
  return bar;
}

/** Edit: the plan in a text box; Build this version sends it. */
function openEdit(it: PlanItem, card: HTMLElement, body: HTMLElement, bar: HTMLElement): void {
  const box = el('textarea', 'plan-editor');
  box.value = it.plan;
  box.rows = Math.min(16, Math.max(4, it.plan.split('\n').length + 1));
  box.setAttribute('aria-label', 'The plan, as you want it built');
  const row = el('div', 'plan-actions');
  row.append(
    button('Build this version', 'primary plan-build-edited', () => decide(it, { accept: true, plan: box.value }), 'Accept your edited plan: the model carries it out'),
    button('Cancel', 'secondary', () => {
      box.replaceWith(body);
      row.replaceWith(bar);
    }),
  );
  body.replaceWith(box);
  bar.replaceWith(row);
  card.append(row);
  box.focus();
}

/** Keep planning: a comment for the model (optional: without one the turn ends). */
function openComment(it: PlanItem, card: HTMLElement, bar: HTMLElement): void {
  const box = el('textarea', 'plan-comment');
  box.rows = 3;
  box.placeholder = 'What should change? (the model revises the plan; leave empty to stop here)';
  box.setAttribute('aria-label', 'What the model should change in the plan');
  const row = el('div', 'plan-actions');
  row.append(
    button('Send to the model', 'primary plan-send-comment', () => decide(it, { accept: false, comment: box.value }), 'Reject this plan with your comment'),
    button('Cancel', 'secondary', () => {
      box.remove();
      row.replaceWith(bar);
    }),
  );
  bar.replaceWith(row);
  card.insertBefore(box, row);
  box.focus();
}
