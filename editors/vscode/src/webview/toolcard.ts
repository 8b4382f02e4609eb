// A tool call's card: its status, its arguments (a bash command in full,
// wrapped, its lines kept), the approval asked in it, its output and the
// diff of an edit.
import type { Approval, Item } from '../shared/messages';
import { button, el, post } from './dom';
import { renderDiff } from './diffview';
import { renderEditCard, reviewWord } from './editcard';

type ToolItem = Extract<Item, { kind: 'tool' }>;

const statusWords: Record<string, string> = {
  streaming: 'preparing', pending: 'pending', running: 'running',
  succeeded: 'done', failed: 'failed', cancelled: 'cancelled',
};

/** The card of a tool call. */
export function renderTool(it: ToolItem): HTMLElement {
  const d = el('div', `card tool s-${it.status}`);
  d.dataset.id = it.id;
  d.dataset.tool = it.name;
  const head = el('div', 'card-head');
  head.append(el('span', 'status-dot'), el('span', 'tool-name', it.name));
  const word = it.approval?.state === 'ask' ? 'needs approval' : (it.review && reviewWord(it.review)) || statusWords[it.status];
  let t: HTMLElement;
  if (it.name === 'bash') {
    // The whole command, wrapped, its lines kept; scrolls when long.
    head.append(el('span', 'spacer'), el('span', 'status-word', word));
    t = el('pre', 'tool-title command', it.title);
    t.tabIndex = 0;
    t.setAttribute('role', 'region');
    t.setAttribute('aria-label', 'The command');
    d.append(head, t);
  } else {
    t = el('code', 'tool-title', it.title);
    t.title = it.title;
    head.append(t, el('span', 'status-word', word));
    d.append(head);
  }
  if (it.approval) {
    d.append(renderApproval(it, it.approval));
  }
  if (it.review) {
    d.append(renderEditCard(it.review));
  }
  if (it.diff) {
    const det = el('details', 'diff');
    det.open = true;
    // The button is not inside the summary (no control inside a control).
    const bar = el('div', 'diff-bar');
    bar.append(button('Open diff', 'link open-diff', () => post({ type: 'openDiff', itemId: it.id }), 'Open in VS Code\'s diff editor'));
    // The result's line after the diff's name: "edited a.ts (+1 -1) · 1 new problem in a.ts".
    det.append(el('summary', undefined, it.summary ? `Diff · ${it.summary}` : 'Diff'), bar, renderDiff(it.diff));
    d.append(det);
  } else if ((it.output || it.summary) && !(it.review && !it.review.command)) {
    const det = el('details', 'output');
    det.open = it.status === 'running' || it.status === 'failed';
    const label = it.status === 'running' ? 'Output so far' : it.summary ? `Output · ${it.summary}` : 'Output';
    const pre = el('pre', 'out', it.output || it.summary || '');
    pre.tabIndex = 0;
    det.append(el('summary', undefined, label), pre);
    d.append(det);
  }
  if (it.path && !it.diff) {
    t.addEventListener('click', () => post({ type: 'openFile', path: it.path! }));
    t.classList.add('clickable');
  }
  return d;
}

/**
 * The approval in a card. Its controls in focus order: the rules
 * (exact command, editable prefix, every command behind a confirmation),
 * then Allow and Deny last, so Shift+Tab from the input reaches Deny
 * first and never "every command".
 */
function renderApproval(it: ToolItem, a: Approval): HTMLElement {
  const box = el('div', 'approval');
  if (a.state !== 'ask') {
    const words = a.state === 'allowed' ? 'Allowed' : 'Denied';
    box.append(el('span', `answer ${a.state}`, a.rule ? `${words}: ${a.rule}` : words));
    return box;
  }
  box.classList.add('asking');
  box.append(el('div', 'ask', `Run this ${it.name === 'bash' ? 'command' : 'tool'}?`));
  if (it.name !== 'bash') {
    const detail = el('pre', 'detail', a.detail);
    detail.tabIndex = 0;
    box.append(detail);
  }
  const rules = el('div', 'rules');
  if (a.exact) {
    const b = button('', 'secondary rule-exact', () => post({ type: 'approve', id: a.id, answer: 'exact' }),
      'Runs this command now, and this exact command from now on in this folder without asking');
    b.append('Always allow ', el('code', undefined, a.exact));
    rules.append(b);
  }
  if (a.prefix !== undefined) {
    const row = el('div', 'rule-prefix-row');
    const id = `prefix-${a.id}`;
    const label = el('label', undefined, 'Always allow commands starting with');
    label.htmlFor = id;
    const input = el('input', 'rule-prefix-input');
    input.id = id;
    input.value = a.prefix;
    input.spellcheck = false;
    const go = button('Allow these', 'secondary rule-prefix', () => post({ type: 'approve', id: a.id, answer: 'prefix', prefix: input.value }),
      'Runs this command now, and every command starting with these words from now on in this folder');
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        go.click();
      }
    });
    row.append(label, input, go);
    rules.append(row);
  }
  if (a.always && it.name === 'fetch') {
    // One host, not every command: no second question.
    rules.append(button('Always allow this host', 'secondary always-host', () => post({ type: 'approve', id: a.id, answer: 'always' }), a.always));
  } else if (a.always) {
    const every = button(it.name === 'bash' ? 'Always allow every command…' : 'Always allow this server\'s tools…', 'link always', () => {
      const confirm = el('div', 'confirm');
      confirm.setAttribute('role', 'group');
      confirm.setAttribute('aria-label', 'Confirm');
      const yes = button(it.name === 'bash' ? 'Allow every command' : 'Allow every tool', 'secondary always-confirm',
        () => post({ type: 'approve', id: a.id, answer: 'always' }));
      const no = button('Cancel', 'link', () => {
        confirm.replaceWith(every);
        every.focus();
      });
      confirm.append(el('span', 'warn', a.always + '.'), yes, no);
      every.replaceWith(confirm);
      no.focus();
    }, a.always);
    rules.append(every);
  }
  if (rules.childElementCount > 0) {
    box.append(rules);
  }
  const choices = el('div', 'choices');
  choices.append(button('Allow', 'primary allow', () => post({ type: 'approve', id: a.id, answer: 'allow' }), 'Run it this once'),
    button('Deny', 'secondary deny', () => post({ type: 'approve', id: a.id, answer: 'deny' }), 'Do not run it; the agent is told'));
  box.append(choices);
  return box;
}
