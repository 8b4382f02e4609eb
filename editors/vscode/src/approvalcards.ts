// The approvals loom-lsp asks through window/showMessageRequest ("Loom
// (name) wants to run bash:\n<command>"): each drawn as the Allow / Deny
// card in its conversation's tool card, answered from the card or from
// the notification the extension shows beside it (the first answer
// wins), taken back when the server times out, and denied when the turn
// ends. "Always allow …" first saves the user's rule.
import * as vscode from 'vscode';
import { ActionItem, AlwaysRule, alwaysAnswered, alwaysRuleArgs, alwaysWords, parseApproval, ruleOffers } from './approval';
import { Commands, ConversationArgs } from './protocol';
import type { Item, NoticeAction } from './shared/messages';
import type { Transcript } from './transcript';

/** The answer to an approval, from the card or the notification. */
export type ApprovalAnswer = 'allow' | 'deny' | 'always' | 'exact' | 'prefix';

/** An answer with the prefix the user edited (for "prefix"). */
export interface ApprovalReply { answer: ApprovalAnswer; prefix?: string }

/** What a pending approval offers beyond Allow / Deny. */
export interface ApprovalOffers { always?: AlwaysRule; exact?: ActionItem; prefix?: ActionItem }

/** What the approvals need from the chat. */
export interface ApprovalHost {
  /** The transcript of the conversation where names, else the shown one of the folder the message names. */
  transcriptFor(where: { folder?: string; conversation?: string } | undefined, folderName: string): Transcript | undefined;
  /** Draws changed items of a folder's conversation. */
  show(folder: string, items: readonly (Item | undefined)[], conversation?: string): void;
  /** Whether the panel shows that conversation. */
  shows(folder: string, conversation: string | undefined): boolean;
  /** Says something in a conversation. */
  notice(level: 'error' | 'warning' | 'info', text: string, action?: NoticeAction, folder?: string, conversation?: string): void;
  /** Runs a loom.* command on the server. */
  exec<T>(command: string, args: object): Promise<T>;
  /** Whether the server lists command. */
  has(command: string): boolean;
  /** The arguments that select t's conversation. */
  argsFor(t: Transcript): ConversationArgs;
}

/** PendingApprovals keeps the approvals that wait for the user. */
export class PendingApprovals {
  private readonly pending = new Map<string, { t: Transcript; resolve: (a: ApprovalReply) => void; offers: ApprovalOffers }>();
  private seq = 0;

  constructor(private readonly host: ApprovalHost) {}

  /**
   * An approval request ("Loom (name) wants to run bash:\n<command>"), shown
   * in its tool card. Resolves with the first answer, from the card or
   * from answer() (the notification); undefined if it is not an approval.
   */
  ask(message: string, actions: readonly ActionItem[] = [], command?: string, where?: { folder?: string; conversation?: string }):
    { id: string; answer: Promise<ApprovalReply>; offers: ApprovalOffers; shown: boolean } | undefined {
    const req = parseApproval(message);
    const t = req ? this.host.transcriptFor(where, req.folderName) : undefined;
    if (!req || !t) {
      return undefined;
    }
    const id = `approval-${++this.seq}`;
    const rules = ruleOffers(actions);
    const offers: ApprovalOffers = { always: req.always, ...rules };
    const exact = rules.exact?.rule?.exact;
    const prefix = rules.prefix?.rule?.prefix;
    // The whole command as the server parsed it, when it says it.
    const detail = typeof command === 'string' && command !== '' ? command : req.detail;
    const card = t.approval(id, req.tool, detail, req.always ? alwaysWords(req.always) : undefined, { exact, prefix });
    this.host.show(t.folder, [card], t.conversation);
    const answer = new Promise<ApprovalReply>((resolve) => {
      this.pending.set(id, { t, resolve, offers });
    });
    return { id, answer, offers, shown: this.host.shows(t.folder, t.conversation) };
  }

  /** The server took approval id back (it timed out): the card says so. */
  withdrawn(id: string): void {
    const p = this.pending.get(id);
    if (!p) {
      return;
    }
    this.pending.delete(id);
    const t = p.t;
    this.host.show(t.folder, [t.answered(id, false, 'not answered in time')], t.conversation);
    p.resolve({ answer: 'deny' });
  }

  /**
   * Answers approval id (the first answer wins; later ones are ignored).
   * "always" first saves the user's rule that allows this kind of call
   * in the folder (rememberAlways), then answers the pending call as
   * allowed.
   */
  async answer(id: string, a: ApprovalAnswer, prefix?: string): Promise<void> {
    const p = this.pending.get(id);
    if (!p) {
      return;
    }
    this.pending.delete(id);
    let rule: string | undefined;
    if (a === 'always') {
      if (p.offers.always) {
        await this.rememberAlways(p.offers.always, p.t).catch((e) =>
          this.host.notice('error', `Could not save "always allow": ${e instanceof Error ? e.message : String(e)}`, undefined, p.t.folder, p.t.conversation));
        rule = alwaysAnswered(p.offers.always);
      } else {
        a = 'allow';
      }
    } else if (a === 'exact' && p.offers.exact?.rule?.exact) {
      rule = `always \`${p.offers.exact.rule.exact}\``;
    } else if (a === 'prefix' && p.offers.prefix?.rule?.prefix) {
      rule = `always commands starting with \`${(prefix?.trim() || p.offers.prefix.rule.prefix).trim()}\``;
    } else if (a === 'exact' || a === 'prefix') {
      a = 'allow';
    }
    const t = p.t;
    this.host.show(t.folder, [t.answered(id, a !== 'deny', rule)], t.conversation);
    p.resolve({ answer: a, prefix });
  }

  /**
   * Remembers "always allow" for t's folder. Every command, and every tool
   * of an MCP server, is the server's own rule (loom.addRule {every} /
   * {mcpServer}, kept in the user's loom state, like the exact and prefix
   * rules): a workspace setting would be trust-bound and held back in a
   * folder with any other widening value.
   */
  private async rememberAlways(rule: AlwaysRule, t: Transcript): Promise<void> {
    await this.host.exec(Commands.addRule, { ...this.host.argsFor(t), ...alwaysRuleArgs(rule) });
  }

  /** t's turn ended: what still waits in it is denied (the server no longer asks). */
  turnEnded(t: Transcript): void {
    for (const [id, a] of this.pending) {
      if (a.t === t) {
        a.resolve({ answer: 'deny' });
        this.pending.delete(id);
      }
    }
  }
}
