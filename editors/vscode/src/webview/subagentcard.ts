// The subagent card: a child conversation an agent call started — its
// agent and task, its state (running, waiting for your approval, done,
// failed, stopped), what it did last and its tokens — with Stop while
// it runs or waits, which stops that child only.
import type { Item } from '../shared/messages';
import { canStop, subagentStateWords } from '../shared/subagents';
import { button, el, formatTokens, post } from './dom';

type SubagentItem = Extract<Item, { kind: 'subagent' }>;

/** The card of a subagent. */
export function renderSubagentCard(it: SubagentItem): HTMLElement {
  const d = el('section', `card subagent-card s-${it.state}`);
  d.dataset.id = it.id;
  d.dataset.child = it.child;
  d.setAttribute('aria-label', `Subagent ${it.agent} ${it.child}`);
  const head = el('div', 'card-head');
  head.append(el('span', 'status-dot'), el('span', 'tool-name', `Subagent ${it.agent}`), el('span', 'subagent-id', it.child));
  if (it.model) {
    head.append(el('span', 'subagent-model', it.model));
  }
  head.append(el('span', 'spacer'), el('span', 'status-word', subagentStateWords(it)));
  if (it.tokens > 0) {
    head.append(el('span', 'tokens', `${formatTokens(it.tokens)} tokens`));
  }
  if (canStop(it)) {
    const stop = button('Stop', 'secondary subagent-stop', () => post({ type: 'stopSubagent', itemId: it.id }),
      `Stop ${it.agent} ${it.child} only; the conversation goes on (loom.stopSubagent)`);
    stop.disabled = !!it.stopping;
    head.append(stop);
  }
  d.append(head, el('div', 'subagent-task', it.task));
  if (it.activity) {
    d.append(el('div', 'subagent-activity', it.activity));
  }
  return d;
}
