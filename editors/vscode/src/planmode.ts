// Plan mode in the panel: the composer's mode selector (loom.setMode),
// the todo list the model keeps (loom/plan) drawn above the input, and
// the plan the model proposes (loom/planProposal) as a card the user
// answers (loom.decidePlan): build it, build it in a new conversation,
// build an edited version, or keep planning (with a comment the model
// reads).
import type { Chat } from './chat';
import { isMode } from './planstatus';
import { Commands, ModeParams, PlanParams, PlanProposalParams } from './protocol';
import type { FromWebview, Mode } from './shared/messages';

type DecideMsg = Extract<FromWebview, { type: 'decidePlan' }>;

/** What a decision says on the plan card, in words. */
export function decisionWords(d: { accept: boolean; fresh?: boolean; plan?: string; comment?: string }): string {
  if (d.accept) {
    const what = d.plan ? 'Building your edited version' : 'Building it';
    return d.fresh ? `${what} in a new conversation` : what;
  }
  return d.comment?.trim() ? `Keep planning: ${d.comment.trim()}` : 'Not built: say why in your next prompt';
}

/**
 * The first prompt of the conversation a plan accepted "in a new
 * conversation" starts: the words loom-lsp gives the model (fsm/plan.go),
 * so that a reload finds it the same as loom.history's.
 */
export function freshPrompt(plan: string): string {
  return 'Carry out this plan:\n\n' + plan;
}

/** The state a decision leaves the card in. */
export function decisionState(d: { accept: boolean; fresh?: boolean }): 'accepted' | 'fresh' | 'rejected' {
  return !d.accept ? 'rejected' : d.fresh ? 'fresh' : 'accepted';
}

/** PlanMode answers the panel's mode and plan messages and draws the server's. */
export class PlanMode {
  constructor(private readonly chat: Chat) {}

  /** loom/mode: the conversation's mode changed (here, from another client, or an accepted plan). */
  mode(p: ModeParams): void {
    const t = this.chat.transcriptOf(p.folder, p.conversation);
    if (isMode(p.mode)) {
      t.mode = p.mode;
      this.chat.show(p.folder, [], t.conversation);
    }
  }

  /** loom/plan: the todo list, whole. */
  plan(p: PlanParams): void {
    const t = this.chat.transcriptOf(p.folder, p.conversation);
    t.plan = Array.isArray(p.items) ? p.items : [];
    this.chat.show(p.folder, [], t.conversation);
  }

  /** loom/planProposal: a plan waits for the user; its card opens in the conversation. */
  proposal(p: PlanProposalParams): void {
    const t = this.chat.transcriptOf(p.folder, p.conversation);
    this.chat.show(p.folder, [t.planProposal(p.turn, p.callId, p.plan)], t.conversation);
    if (!this.chat.panel.visible) {
      void this.chat.panel.reveal();
    }
  }

  async handle(msg: FromWebview): Promise<void> {
    if (msg.type === 'setMode') {
      await this.setMode(msg.mode);
    } else if (msg.type === 'decidePlan') {
      await this.decide(msg);
    }
  }

  /** Switches the shown conversation's mode; the server's loom/mode (and loom.setMode's reply) draws it. */
  async setMode(mode: Mode): Promise<void> {
    const folder = this.chat.current();
    if (!folder || !isMode(mode)) {
      return;
    }
    const t = this.chat.transcript(folder);
    try {
      const r = await this.chat.exec<{ mode?: string } | null>(Commands.setMode, { ...this.chat.argsFor(t), mode });
      t.mode = isMode(r?.mode) ? r.mode : mode;
    } catch (e) {
      this.chat.notice('error', `Could not switch to ${mode} mode: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.chat.show(folder, [], t.conversation);
  }

  /** Answers the plan card msg.itemId (loom.decidePlan); the card says what was decided. */
  async decide(msg: DecideMsg): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    const t = this.chat.transcript(folder);
    const card = t.get(msg.itemId);
    if (card?.kind !== 'plan' || card.state !== 'open') {
      return;
    }
    const d = {
      accept: msg.accept,
      ...(msg.accept && msg.fresh ? { fresh: true } : {}),
      ...(msg.accept && msg.plan?.trim() && msg.plan.trim() !== card.plan.trim() ? { plan: msg.plan.trim() } : {}),
      ...(!msg.accept && msg.comment?.trim() ? { comment: msg.comment.trim() } : {}),
    };
    // Drawn decided at once: the turn may end (a fresh start) before the reply.
    this.chat.show(folder, [t.planDecided(card.id, decisionState(d), decisionWords(d))], t.conversation);
    if (d.fresh) {
      // The server starts the new conversation: the panel follows it.
      this.chat.followNew(folder, freshPrompt(d.plan ?? card.plan));
    }
    try {
      await this.chat.exec(Commands.decidePlan, { ...this.chat.argsFor(t), ...d });
    } catch (e) {
      card.state = 'open';
      card.answer = undefined;
      this.chat.show(folder, [card], t.conversation);
      this.chat.notice('error', `Could not answer the plan: ${e instanceof Error ? e.message : String(e)}`, undefined, folder, t.conversation);
    }
  }
}
