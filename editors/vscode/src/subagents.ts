// Subagents in the panel: each child conversation an agent call starts
// is a card (loom/subagent) — its agent, task, state, last activity and
// tokens — with a Stop button while it runs or waits, which stops that
// child only (loom.stopSubagent); the parent's turn goes on.
import type { Chat } from './chat';
import { Commands } from './protocol';
import type { FromWebview } from './shared/messages';
import { canStop } from './shared/subagents';
import type { SubagentParams } from './wire.gen';

/** Subagents draws loom/subagent and answers the cards' Stop. */
export class Subagents {
  constructor(private readonly chat: Chat) {}

  /** loom/subagent: a child's state, whole. */
  update(p: SubagentParams): void {
    const t = this.chat.transcriptOf(p.folder, p.conversation);
    this.chat.show(p.folder, [t.subagent(p)], t.conversation);
  }

  async handle(msg: FromWebview): Promise<void> {
    if (msg.type !== 'stopSubagent') {
      return;
    }
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    const t = this.chat.transcript(folder);
    const card = t.get(msg.itemId);
    if (card?.kind !== 'subagent' || !canStop(card)) {
      return;
    }
    card.stopping = true;
    this.chat.show(folder, [card], t.conversation);
    try {
      await this.chat.exec(Commands.stopSubagent, { ...this.chat.argsFor(t), child: card.child });
    } catch (e) {
      card.stopping = false;
      this.chat.show(folder, [card], t.conversation);
      this.chat.notice('error', `Could not stop ${card.agent} ${card.child}: ${e instanceof Error ? e.message : String(e)}`, undefined, folder, t.conversation);
    }
  }
}
