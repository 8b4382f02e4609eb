// What a subagent card says and offers, shared by the extension (which
// keeps the cards) and the webview (which draws them). No imports but the
// sibling shared files.
import type { Item, SubagentState } from './messages';

type SubagentItem = Extract<Item, { kind: 'subagent' }>;

const states: readonly SubagentState[] = ['running', 'waiting', 'done', 'failed', 'stopped'];

/** A state loom/subagent sent, as the card knows it (an unknown word: running). */
export function subagentState(s: string): SubagentState {
  return (states as readonly string[]).includes(s) ? (s as SubagentState) : 'running';
}

/** The card's state in words. */
export function subagentStateWords(it: Pick<SubagentItem, 'state' | 'stopping'>): string {
  if (it.stopping && canStop(it)) {
    return 'stopping…';
  }
  return { running: 'running', waiting: 'waiting for your approval', done: 'done', failed: 'failed', stopped: 'stopped' }[it.state];
}

/** Whether the card offers Stop: the child runs or waits. */
export function canStop(it: Pick<SubagentItem, 'state'>): boolean {
  return it.state === 'running' || it.state === 'waiting';
}

/** The card's item id of a child. */
export function subagentItemId(child: string): string {
  return `sub:${child}`;
}
