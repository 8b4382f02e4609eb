// The conversation's items as nodes: prompts (with their chips), answers
// (markdown, updated in place while they stream), thinking, commits with
// their Undo, notices and turn ends (Stopped, interrupted).
import type { Item } from '../shared/messages';
import { restoreControl } from './checkpoint';
import { button, el, formatTokens, post } from './dom';
import { renderMarkdown, updateMarkdown } from './markdown';
import { renderPlanCard } from './plancard';
import { renderSubagentCard } from './subagentcard';
import { renderTool } from './toolcard';

/** The node of an item. */
export function render(it: Item): HTMLElement {
  switch (it.kind) {
    case 'user': {
      const d = el('div', 'msg user' + (it.queued ? ' queued' : ''));
      d.dataset.id = it.id;
      const who = el('div', 'who', 'You');
      if (it.queued) {
        who.append(el('span', 'badge', 'queued'));
      }
      d.append(who, el('div', 'text', it.text));
      if (it.chips?.length) {
        const chips = el('div', 'chips');
        for (const c of it.chips) {
          chips.append(el('span', 'chip', c));
        }
        d.append(chips);
      }
      if (it.context) {
        d.append(el('div', 'context', it.context));
      }
      if (it.turn !== undefined && !it.queued) {
        d.append(restoreControl(it.id));
      }
      return d;
    }
    case 'assistant': {
      const d = el('div', 'msg assistant');
      d.dataset.id = it.id;
      const body = el('div', 'markdown');
      body.innerHTML = renderMarkdown(it.text);
      d.append(body);
      return d;
    }
    case 'thought': {
      // Folded, like the thinking of other agents: a click opens it.
      const d = el('details', 'thought');
      d.dataset.id = it.id;
      d.append(el('summary', '', 'Thinking'), el('div', 'text', it.text));
      return d;
    }
    case 'tool': {
      if ((it.name === 'update_plan' || it.name === 'propose_plan') && it.status !== 'failed') {
        // Drawn by the checklist above the input and by the plan card.
        const d = el('div', 'card tool plan-tool');
        d.dataset.id = it.id;
        d.hidden = true;
        return d;
      }
      return renderTool(it);
    }
    case 'plan':
      return renderPlanCard(it);
    case 'subagent':
      return renderSubagentCard(it);
    case 'commit': {
      const d = el('div', 'commit');
      d.dataset.id = it.id;
      d.dataset.sha = it.sha;
      d.append(el('span', 'dot'), el('span', 'what', `Committed ${it.sha.slice(0, 7)}`), el('span', 'subject', it.message.split('\n')[0]));
      if (it.undone) {
        d.append(el('span', 'undone', it.undone));
        d.classList.add('is-undone');
      } else {
        d.append(button('Undo', 'link undo', () => post({ type: 'undo', sha: it.sha }), `Revert commit ${it.sha.slice(0, 7)} and its edits (loom.undo)`));
      }
      return d;
    }
    case 'notice': {
      const d = el('div', `notice ${it.level}`);
      d.dataset.id = it.id;
      d.append(el('span', 'text', it.text));
      if (it.action === 'openSettings') {
        d.append(button('Open Settings', 'secondary', () => post({ type: 'action', action: 'openSettings' })));
      } else if (it.action === 'installServer') {
        d.append(button('Install loom-lsp', 'secondary', () => post({ type: 'action', action: 'installServer' })));
      } else if (it.action === 'redo') {
        d.append(button('Redo', 'secondary redo', () => post({ type: 'action', action: 'redo' }), 'Undo this rewind (loom.redo); possible until your next prompt'));
      }
      return d;
    }
    case 'turnEnd': {
      const d = el('div', `turn-end ${it.outcome}`);
      d.dataset.id = it.id;
      let words = '';
      if (it.outcome === 'cancelled') {
        words = 'Stopped: the turn was cancelled.';
      } else if (it.outcome === 'failed') {
        words = 'The turn ended with an error.';
      } else if (it.outcome === 'interrupted') {
        words = 'Interrupted: the window reloaded during this turn.';
      }
      if (words) {
        d.append(el('span', 'words', words));
      }
      if (it.usage && it.usage.total > 0) {
        d.append(el('span', 'tokens', `${formatTokens(it.usage.total)} tokens`));
      }
      return d;
    }
  }
}

/**
 * Updates node to show it without replacing it, when that is possible (a
 * streaming answer: only the new words change); returns false when the
 * node must be replaced.
 */
export function updateInPlace(node: HTMLElement, it: Item): boolean {
  if (it.kind === 'assistant' && node.classList.contains('assistant')) {
    const body = node.querySelector<HTMLElement>('.markdown');
    if (body) {
      updateMarkdown(body, it.text);
      return true;
    }
  }
  if (it.kind === 'thought' && node instanceof HTMLDetailsElement) {
    const text = node.querySelector('.text');
    if (text && it.text.startsWith(text.textContent ?? '')) {
      text.append(it.text.slice((text.textContent ?? '').length));
      return true;
    }
  }
  return false;
}
