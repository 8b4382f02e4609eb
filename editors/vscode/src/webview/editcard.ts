// The edit card: a proposed change (tools.edits = "review") in its tool
// card. Per file and per hunk Accept / Reject (toggles: a second click
// takes the decision back), the hunk's diff, Open diff (VS Code's diff
// editor, with Accept / Reject CodeLens per hunk), a comment box for the
// agent, then Submit (once every hunk is decided) or Accept all / Reject
// all at once. After the decision it says what was applied and rejected.
import type { HunkDecision, ReviewCard, ReviewFile, ReviewHunk, ReviewIntent } from '../shared/review';
import { button, el, post } from './dom';
import { renderDiff } from './diffview';

/** The comment being typed per proposal: it wins over a redraw's older copy. */
const drafts = new Map<string, string>();

function send(intent: ReviewIntent): void {
  post({ type: 'review', intent });
}

/** Marks a control so that a redraw of the card gives it the focus back. */
function keyed<T extends HTMLElement>(e: T, key: string): T {
  e.dataset.focusKey = key;
  return e;
}

/** The card's verbs: Accept / Reject, or Keep / Discard for a command's changes (already on disk). */
function verbs(r: ReviewCard): { accept: string; reject: string; accepted: string; rejected: string } {
  return r.command
    ? { accept: 'Keep', reject: 'Discard', accepted: 'kept', rejected: 'discarded' }
    : { accept: 'Accept', reject: 'Reject', accepted: 'accepted', rejected: 'rejected' };
}

/** The words of a card's state, for the status word of its tool card. */
export function reviewWord(r: ReviewCard): string | undefined {
  switch (r.state) {
    case 'open': return 'waiting for your review';
    case 'sending': return 'applying your decision';
    case 'closed': return 'not reviewed';
    default: return undefined;
  }
}

/** The review part of a tool card. */
export function renderEditCard(r: ReviewCard): HTMLElement {
  const box = el('section', `edit-review r-${r.state}`);
  box.dataset.review = r.id;
  box.setAttribute('aria-label', 'Review the proposed change');
  const open = r.state === 'open';
  box.append(el('div', 'review-state', stateWords(r)));
  if (r.error) {
    const err = el('div', 'review-error', r.error);
    err.setAttribute('role', 'alert');
    box.append(err);
  }
  for (const f of r.files) {
    box.append(renderFile(r, f, open));
  }
  if (open) {
    box.append(renderActions(r));
  } else if (r.comment.trim() !== '') {
    box.append(el('div', 'review-comment-sent', `Your comment: “${r.comment.trim()}”`));
  }
  return box;
}

function stateWords(r: ReviewCard): string {
  const n = r.files.reduce((k, f) => k + f.hunks.length, 0);
  switch (r.state) {
    case 'open':
      return r.command
        ? `Waiting for your review: \`${r.command}\` changed ${r.files.length === 1 ? 'a file' : `${r.files.length} files`} (${n} ${n === 1 ? 'hunk' : 'hunks'}); they are on disk, not committed: keep or discard them.`
        : `Waiting for your review: ${n} ${n === 1 ? 'hunk' : 'hunks'}; nothing is written until you decide.`;
    case 'sending':
      return 'Applying your decision…';
    case 'closed':
      return 'Not reviewed: the turn ended first; nothing was written.';
    case 'failed':
      return 'The review could not be sent.';
    case 'decided': {
      const applied = r.applied ?? [];
      const rejected = r.rejected ?? [];
      const parts: string[] = [];
      const v = verbs(r);
      if (r.command) {
        parts.push(applied.length ? `Kept ${hunkWords(applied)}` : 'Nothing kept');
      } else {
        parts.push(applied.length ? `Applied ${hunkWords(applied)}` : 'Nothing applied');
      }
      if (rejected.length) {
        parts.push(`${v.rejected} ${hunkWords(rejected)}`);
      }
      if (r.conflicts?.length) {
        parts.push(`left out (you changed the same lines): ${r.conflicts.join(', ')}`);
      }
      return parts.join('; ') + '.';
    }
  }
}

function hunkWords(ids: readonly string[]): string {
  return `${ids.length === 1 ? 'hunk' : 'hunks'} ${ids.join(', ')}`;
}

function renderFile(r: ReviewCard, f: ReviewFile, open: boolean): HTMLElement {
  const d = el('div', 'review-file');
  d.setAttribute('role', 'group');
  d.setAttribute('aria-label', f.path);
  const head = el('div', 'review-file-head');
  const added = f.hunks.reduce((k, h) => k + h.added, 0);
  const removed = f.hunks.reduce((k, h) => k + h.removed, 0);
  head.append(el('code', 'review-path', f.path), el('span', 'review-stat', `${kindWord(f.kind)}+${added} −${removed}`));
  const tools = el('div', 'review-file-tools');
  if (open) {
    tools.append(keyed(button('Open diff', 'link review-open-diff', () => send({ kind: 'openDiff', id: r.id, path: f.path }),
      `Open ${f.path} in VS Code's diff editor, with Accept / Reject above each hunk`), `${r.id}:diff:${f.path}`));
  }
  if (open && f.hunks.length > 1) {
    const ids = f.hunks.map((h) => h.id);
    const v = verbs(r);
    tools.append(
      decisionButton(r.id, ids, 'accept', `${v.accept} file`, `${v.accept} file ${f.path} (every hunk)`, f.hunks.every((h) => h.decision === 'accept'), `${r.id}:fa:${f.path}`),
      decisionButton(r.id, ids, 'reject', `${v.reject} file`, `${v.reject} file ${f.path} (every hunk)`, f.hunks.every((h) => h.decision === 'reject'), `${r.id}:fr:${f.path}`),
    );
  }
  head.append(tools);
  d.append(head);
  for (const h of f.hunks) {
    d.append(renderHunk(r, f, h, open));
  }
  return d;
}

function kindWord(kind: string): string {
  return kind === 'create' ? 'new file, ' : kind === 'delete' ? 'deleted, ' : '';
}

function renderHunk(r: ReviewCard, f: ReviewFile, h: ReviewHunk, open: boolean): HTMLElement {
  const outcome = hunkOutcome(r, h);
  const d = el('div', `review-hunk${outcome ? ' h-' + outcome : h.decision ? ' h-' + h.decision : ''}`);
  d.dataset.hunk = h.id;
  const head = el('div', 'hunk-head');
  head.append(el('span', 'hunk-name', `Hunk ${h.id} · line ${h.line} (+${h.added} −${h.removed})`));
  const v = verbs(r);
  if (open) {
    const cls = h.decision === 'accept' ? 'accepted' : h.decision === 'reject' ? 'rejected' : 'undecided';
    const word = h.decision === 'accept' ? v.accepted : h.decision === 'reject' ? v.rejected : 'undecided';
    head.append(el('span', `hunk-decision ${cls}`, word));
    head.append(
      decisionButton(r.id, [h.id], 'accept', v.accept, `${v.accept} hunk ${h.id} of ${f.path}`, h.decision === 'accept', `${r.id}:a:${h.id}`),
      decisionButton(r.id, [h.id], 'reject', v.reject, `${v.reject} hunk ${h.id} of ${f.path}`, h.decision === 'reject', `${r.id}:r:${h.id}`),
    );
  } else if (outcome) {
    const word = outcome === 'applied' ? (r.command ? 'kept' : 'applied') : outcome === 'rejected' ? v.rejected : outcomeWords[outcome];
    head.append(el('span', `hunk-decision ${outcome}`, word));
  }
  d.append(head);
  if (outcome !== 'applied') {
    // An applied hunk is in the card's diff of what landed.
    d.append(renderDiff(h.diff));
  }
  return d;
}

const outcomeWords: Record<string, string> = { applied: 'applied', rejected: 'rejected', conflict: 'left out: you changed these lines' };

function hunkOutcome(r: ReviewCard, h: ReviewHunk): string | undefined {
  if (r.state !== 'decided') {
    return undefined;
  }
  if (r.conflicts?.includes(h.id)) {
    return 'conflict';
  }
  if (r.applied?.includes(h.id)) {
    return 'applied';
  }
  return r.rejected?.includes(h.id) ? 'rejected' : undefined;
}

/** A toggle: pressed when the hunks have this decision; pressing it again takes the decision back. */
function decisionButton(id: string, hunks: string[], decision: HunkDecision, label: string, name: string, pressed: boolean, key: string): HTMLButtonElement {
  const b = button(label, `${pressed ? 'primary' : 'secondary'} review-${decision}`, () =>
    send({ kind: 'decide', id, hunks, decision: pressed ? undefined : decision }), pressed ? `${name} (pressed: click again to undecide)` : name);
  b.setAttribute('aria-pressed', String(pressed));
  b.setAttribute('aria-label', name);
  return keyed(b, key);
}

function renderActions(r: ReviewCard): HTMLElement {
  const box = el('div', 'review-actions');
  const id = `review-comment-${r.id}`;
  const label = el('label', 'review-comment-label', 'Comment for the agent (optional)');
  label.htmlFor = id;
  const text = keyed(el('textarea', 'review-comment'), `${r.id}:comment`);
  text.id = id;
  text.rows = 2;
  text.placeholder = 'Why you rejected a hunk, what to do instead…';
  text.value = drafts.get(r.id) ?? r.comment;
  text.addEventListener('input', () => {
    drafts.set(r.id, text.value);
    send({ kind: 'comment', id: r.id, text: text.value });
  });
  const left = r.files.flatMap((f) => f.hunks).filter((h) => !h.decision).length;
  const submit = () => {
    drafts.delete(r.id);
    send({ kind: 'submit', id: r.id, comment: text.value });
  };
  text.addEventListener('keydown', (ev) => {
    // Ctrl+Enter sends once every hunk is decided; Escape stays in the box.
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey) && left === 0) {
      ev.preventDefault();
      submit();
    } else if (ev.key === 'Escape') {
      ev.stopPropagation();
    }
  });
  const buttons = el('div', 'review-buttons');
  const go = keyed(button('Submit review', 'primary review-submit', submit,
    left === 0 ? 'Apply the accepted hunks; the agent reads what you rejected and your comment' : 'Decide every hunk first'), `${r.id}:submit`);
  go.disabled = left > 0;
  const v = verbs(r);
  const all = keyed(button(`${v.accept} all`, 'secondary review-accept-all', () => {
    drafts.delete(r.id);
    send({ kind: 'submit', id: r.id, all: 'accept', comment: text.value });
  }, r.command ? 'Keep every change of the command (committed)' : 'Apply every hunk now'), `${r.id}:all-accept`);
  const none = keyed(button(`${v.reject} all`, 'secondary review-reject-all', () => {
    drafts.delete(r.id);
    send({ kind: 'submit', id: r.id, all: 'reject', comment: text.value });
  }, r.command ? 'Take every change of the command back; the agent reads your comment' : 'Write nothing; the agent reads your comment'), `${r.id}:all-reject`);
  buttons.append(go, all, none);
  if (r.others) {
    // The other files of the same response, each in its own card: all at once.
    const n = r.others + 1;
    const files = `${n} files`;
    buttons.append(
      keyed(button(`${v.accept} all ${files}`, 'secondary review-accept-response', () => {
        drafts.delete(r.id);
        send({ kind: 'submitResponse', id: r.id, all: 'accept', comment: text.value });
      }, `Apply every hunk of the ${files} this response changes`), `${r.id}:resp-accept`),
      keyed(button(`${v.reject} all ${files}`, 'secondary review-reject-response', () => {
        drafts.delete(r.id);
        send({ kind: 'submitResponse', id: r.id, all: 'reject', comment: text.value });
      }, `Write none of the ${files} this response changes; the agent reads your comment`), `${r.id}:resp-reject`),
    );
  }
  const hint = el('div', 'review-hint', left === 0 ? 'Every hunk is decided.' : `${left} ${left === 1 ? 'hunk' : 'hunks'} left to decide.`);
  hint.setAttribute('aria-live', 'polite');
  box.append(label, text, buttons, hint);
  return box;
}
