// Review in the chat panel (tools.edits = "review"): a loom/proposedChanges
// becomes the edit card of its tool card (webview/editcard.ts); the
// user's decisions there and on the diff editor's CodeLens
// (reviewlens.ts) go into one ReviewBook, and the decision goes to the
// server as one loom.review once it is whole. The header's toggle writes
// loom.tools.edits. VS Code's own notification is the fallback when the
// panel is not on screen.
import * as vscode from 'vscode';
import { ReviewBook } from './reviewbook';
import { ReviewLens } from './reviewlens';
import { ProposedChangesParams, ReviewResult } from './reviewwire';
import { reviewEditsValue } from './settings';
import type { Item } from './shared/messages';
import type { HunkDecision, ReviewIntent } from './shared/review';
import type { Transcript } from './transcript';

type ToolItem = Extract<Item, { kind: 'tool' }>;

/** What the review needs from the chat. */
export interface ReviewHost {
  /** Runs a loom.* command; rejects with the server's error. */
  exec<T>(command: string, args: object): Promise<T>;
  /**
   * The transcript of a folder's conversation (absent: the one shown),
   * where the proposal's tool card is.
   */
  transcript(folder: string, conversation?: string): Transcript;
  /** Sends changed items (and the header) of a folder's conversation to the panel. */
  show(folder: string, items: Item[], conversation?: string): void;
  /** Whether the chat panel is on screen. */
  panelVisible(): boolean;
  /** Shows the chat panel. */
  revealPanel(): Promise<void>;
  /** Fires when the panel comes on screen (true) or goes out of sight (false). */
  onPanelVisible: vscode.Event<boolean>;
}

/** EditReview routes proposals, decisions and the review toggle. */
export class EditReview implements vscode.Disposable {
  readonly book = new ReviewBook();
  readonly lens: ReviewLens;
  private readonly subs: vscode.Disposable[] = [];
  /** The proposals VS Code's notification was shown for (once each). */
  private readonly notified = new Set<string>();
  /** The drafts not sent to the server yet (loom.reviewDraft), by proposal id. */
  private readonly draftTimers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly host: ReviewHost) {
    this.lens = new ReviewLens(this.book, (id, hunks, d) => this.decideFromLens(id, hunks, d));
    this.subs.push(this.lens);
    // The panel goes out of sight while a change waits: the notification asks instead.
    this.subs.push(host.onPanelVisible((visible) => {
      if (!visible) {
        for (const p of this.book.open()) {
          void this.notify(p.params);
        }
      }
    }));
  }

  /** loom/proposedChanges: the card asks; a notification too when the panel is hidden. */
  proposed(p: ProposedChangesParams): void {
    this.book.add(p);
    this.draw(p.id);
    this.drawSiblings(p.id); // their "all N files" counts
    if (!this.host.panelVisible()) {
      void this.notify(p);
    }
  }

  /** The fallback when the panel is not on screen: VS Code's notification (once per proposal). */
  private async notify(p: ProposedChangesParams): Promise<void> {
    if (this.notified.has(p.id)) {
      return;
    }
    this.notified.add(p.id);
    const files = p.changes.map((c) => c.path).join(', ');
    const hunks = p.changes.reduce((n, c) => n + c.hunks.length, 0);
    const [acceptAll, rejectAll] = p.command ? ['Keep All', 'Discard All'] : ['Accept All', 'Reject All'];
    const pick = await vscode.window.showInformationMessage(p.command
      ? `Loom: \`${p.command}\` changed ${files} (${hunks} hunk${hunks === 1 ? '' : 's'}); they are on disk, not committed: keep or discard them.`
      : `Loom proposes a change to ${files} (${hunks} hunk${hunks === 1 ? '' : 's'}); nothing is written until you decide.`,
    'Review in Chat', 'Open Diff', acceptAll, rejectAll);
    if (this.book.get(p.id)?.state !== 'open') {
      return; // decided meanwhile (in the card or the diff)
    }
    if (pick === 'Review in Chat') {
      await this.host.revealPanel();
    } else if (pick === 'Open Diff' && p.changes[0]) {
      await this.lens.open(p, p.changes[0].path);
    } else if (pick === acceptAll) {
      await this.submit(p.id, 'accept');
    } else if (pick === rejectAll) {
      const comment = await vscode.window.showInputBox({ prompt: 'Why? (the agent reads it)', placeHolder: 'optional comment', ignoreFocusOut: true });
      await this.submit(p.id, 'reject', comment);
    }
  }

  /** "Loom: Review the Proposed Change…": the panel's card and the diff of the oldest open proposal. */
  async reviewOldest(): Promise<void> {
    const p = this.book.open()[0];
    if (!p) {
      void vscode.window.showInformationMessage('Loom: no change waits for your review.');
      return;
    }
    await this.host.revealPanel();
    if (p.params.changes[0]) {
      await this.lens.open(p.params, p.params.changes[0].path);
    }
  }

  /** What the user did on an edit card or the header's toggle. */
  async handle(intent: ReviewIntent): Promise<void> {
    switch (intent.kind) {
      case 'decide':
        if (this.book.decide(intent.id, intent.hunks, intent.decision)) {
          this.draw(intent.id);
          this.keepDraft(intent.id, 0);
        }
        break;
      case 'comment':
        // Kept for the decision; the card holds the text (no redraw while typing).
        this.book.setComment(intent.id, intent.text);
        this.setCard(intent.id);
        this.keepDraft(intent.id, 300);
        break;
      case 'submit':
        await this.submit(intent.id, intent.all, intent.comment);
        break;
      case 'submitResponse': {
        // Every file of the response: this card with its comment, the others as they stand.
        const others = this.book.siblings(intent.id).map((x) => x.params.id);
        await Promise.all([this.submit(intent.id, intent.all, intent.comment), ...others.map((id) => this.submit(id, intent.all))]);
        break;
      }
      case 'openDiff': {
        const p = this.book.get(intent.id);
        if (p) {
          await this.lens.open(p.params, intent.path);
        }
        break;
      }
      case 'toggle':
        await setReviewEdits(intent.on);
        break;
    }
  }

  /**
   * Tells the server what the user decided so far on proposal id and the
   * comment typed (loom.reviewDraft), after delay ms without a change: a
   * window reload (which restarts loom-lsp) gives them back.
   */
  private keepDraft(id: string, delay: number): void {
    clearTimeout(this.draftTimers.get(id));
    this.draftTimers.set(id, setTimeout(() => void this.sendDraft(id), delay));
  }

  private async sendDraft(id: string): Promise<void> {
    this.draftTimers.delete(id);
    const p = this.book.get(id);
    const draft = this.book.draft(id);
    if (!p || !draft) {
      return;
    }
    try {
      await this.host.exec('loom.reviewDraft', {
        uri: vscode.Uri.file(p.params.folder).toString(), ...(p.params.conversation ? { conversation: p.params.conversation } : {}), id, ...draft,
      });
    } catch { /* decided meanwhile: the draft is a convenience */ }
  }

  /** Sends the drafts still waiting for their delay (the window closes or reloads). */
  async flushDrafts(): Promise<void> {
    const ids = [...this.draftTimers.keys()];
    for (const id of ids) {
      clearTimeout(this.draftTimers.get(id));
    }
    await Promise.all(ids.map((id) => this.sendDraft(id)));
  }

  /** A CodeLens click: the decision is sent once every hunk is decided. */
  private async decideFromLens(id: string, hunks: string[] | 'all', d: HunkDecision | undefined): Promise<void> {
    if (!this.book.decide(id, hunks, d)) {
      return;
    }
    this.draw(id);
    this.keepDraft(id, 0);
    if (this.book.complete(id)) {
      await this.submit(id);
    }
  }

  /** Sends proposal id's decision (all accepted / rejected, or as decided). */
  async submit(id: string, all?: HunkDecision, comment?: string): Promise<void> {
    const p = this.book.get(id);
    if (!p) {
      return;
    }
    if (comment !== undefined && p.state === 'open') {
      this.book.setComment(id, comment);
    }
    const sent = this.book.send(id, vscode.Uri.file(p.params.folder).toString(), all);
    if ('error' in sent) {
      if (p.state === 'open') {
        // A second click while it is sent, or after, needs no words.
        p.error = `Not sent: ${sent.error}.`;
        this.draw(id);
      }
      return;
    }
    p.error = undefined;
    this.draw(id);
    this.drawSiblings(id);
    try {
      const r = await this.host.exec<ReviewResult>('loom.review', sent.args);
      this.book.settled(id, { applied: r?.applied ?? [], rejected: r?.rejected ?? [], conflicts: r?.conflicts ?? [] });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      this.book.failed(id, `loom.review: ${msg}`, /no such proposal|not waiting|stale/i.test(msg));
    }
    this.draw(id);
  }

  /** The turn of folder ended: proposals still open were cancelled with it. */
  turnEnded(folder: string, conversation?: string): void {
    for (const p of this.book.closeOpen(folder, conversation)) {
      this.draw(p.params.id);
    }
  }

  /**
   * After a redraw (loom.history, a window reload): the proposals the
   * server still waits on (known: loom.panelState's, else asked) get
   * their cards back; a card still asking for
   * a proposal the server no longer has says it was not reviewed.
   */
  async resync(folder: string, known?: ProposedChangesParams[]): Promise<void> {
    let waiting: ProposedChangesParams[] = known ?? [];
    const conversation = this.host.transcript(folder).conversation;
    try {
      if (!known) {
        const r = await this.host.exec<{ proposals?: ProposedChangesParams[] }>('loom.proposals',
          { uri: vscode.Uri.file(folder).toString(), ...(conversation ? { conversation } : {}) });
        waiting = r?.proposals ?? [];
      }
    } catch {
      // The server did not answer: only the proposals this window knows can be decided.
    }
    const t = this.host.transcript(folder);
    const stale: Item[] = [];
    const live = (id: string) => waiting.some((w) => w.id === id) || ['open', 'sending'].includes(this.book.get(id)?.state ?? '');
    for (const it of t.items) {
      // "sending" too: a window reloaded while loom.review was on its way never heard back.
      if (it.kind === 'tool' && (it.review?.state === 'open' || it.review?.state === 'sending') && !live(it.review.id)) {
        this.book.close(it.review.id);
        it.review = { ...it.review, state: 'closed' };
        stale.push(it);
      }
    }
    if (stale.length) {
      this.host.show(folder, stale);
    }
    for (const w of waiting) {
      // loom.proposals does not know the turn: the card is found by its call.
      this.book.add({ ...w, folder: w.folder || folder, turn: w.turn || this.turnOfCall(t, w.callId) });
    }
    for (const w of waiting) {
      this.draw(w.id); // once all are in: each card counts the others of its response
    }
  }

  private turnOfCall(t: Transcript, callId: string): number {
    for (let i = t.items.length - 1; i >= 0; i--) {
      const it = t.items[i];
      if (it.kind === 'tool' && it.callId === callId) {
        return it.turn;
      }
    }
    return 0;
  }

  /** Puts proposal id's card into its tool card without sending it. */
  private setCard(id: string): ToolItem | undefined {
    const p = this.book.get(id);
    const card = this.book.card(id);
    if (!p || !card) {
      return undefined;
    }
    const t = this.host.transcript(p.params.folder, p.params.conversation);
    const it = toolCard(t, p.params);
    if (it) {
      it.review = card;
    }
    return it;
  }

  /** Redraws the cards of the other files of proposal id's response (how many wait changed). */
  private drawSiblings(id: string): void {
    for (const x of this.book.siblings(id)) {
      this.draw(x.params.id);
    }
  }

  /** Redraws proposal id's card in the panel and its CodeLens. */
  private draw(id: string): void {
    const p = this.book.get(id);
    const it = this.setCard(id);
    if (p && it) {
      this.host.show(p.params.folder, [it], p.params.conversation);
    }
    this.lens.refresh();
  }

  dispose(): void {
    for (const t of this.draftTimers.values()) {
      clearTimeout(t);
    }
    for (const s of this.subs) {
      s.dispose();
    }
  }
}

/**
 * The tool card of a proposal's call: by its turn and call id, else the
 * newest card of that call id, else a new card (the call's status never
 * reached this window).
 */
function toolCard(t: Transcript, p: ProposedChangesParams): ToolItem | undefined {
  const exact = t.get(`t${p.turn}-${p.callId}`);
  if (exact?.kind === 'tool') {
    return exact;
  }
  for (let i = t.items.length - 1; i >= 0; i--) {
    const it = t.items[i];
    if (it.kind === 'tool' && it.callId === p.callId) {
      return it;
    }
  }
  const made = t.tool({
    folder: p.folder, turn: p.turn, id: p.callId, name: p.command ? 'bash' : p.changes[0]?.kind === 'create' ? 'write_file' : 'edit_file',
    summary: '', view: p.view, status: 'running',
  });
  return made.find((x): x is ToolItem => x.kind === 'tool' && x.callId === p.callId);
}

/** Sets loom.tools.edits in the workspace settings as the toggle says (reviewEditsValue). */
export async function setReviewEdits(on: boolean): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('loom');
  const user = cfg.inspect<string>('tools.edits')?.globalValue;
  await cfg.update('tools.edits', reviewEditsValue(on, user), vscode.ConfigurationTarget.Workspace);
}

/**
 * Whether edits wait for review: what loom.status says is in force (an
 * untrusted folder's .loom.toml asking for review wins over an "auto"
 * setting).
 */
export function reviewEditsInForce(status: { edits?: string }): boolean {
  return status.edits === 'review';
}
