// Review and rewind in VS Code, with VS Code's own UI (the chat panel's
// webview is another engineer's, being reworked): a proposed change
// (tools.edits = "review") opens as a diff and is decided per hunk in a
// multi-select quick pick, with a comment box when something is
// rejected; "Loom: Restore Checkpoint…" lists the turns and rewinds the
// files, the conversation or both; "Loom: Redo" undoes the last rewind.
import * as vscode from 'vscode';
import {
  checkpointLabel, CheckpointsResult, hunkLabel, ProposedChangesParams, restoreKinds, reviewArgs, ReviewResult, RewindResult,
  RewoundParams,
} from './reviewwire';

type Execute = (command: string, arg: object) => Promise<unknown>;

export class ReviewController {
  /** Proposals waiting for a decision, oldest first. */
  readonly pending: ProposedChangesParams[] = [];

  constructor(private readonly execute: Execute) {}

  /** loom/proposedChanges: say so, with the ways to decide. */
  async proposed(p: ProposedChangesParams): Promise<void> {
    this.pending.push(p);
    const files = p.changes.map((c) => c.path).join(', ');
    const hunks = p.changes.reduce((n, c) => n + c.hunks.length, 0);
    const pick = await vscode.window.showInformationMessage(
      `Loom proposes a change to ${files} (${hunks} hunk${hunks === 1 ? '' : 's'}); nothing is written until you decide.`,
      'Review…', 'Accept All', 'Reject All');
    if (pick === 'Accept All') {
      await this.decide(p, p.changes.flatMap((c) => c.hunks.map((h) => h.id)));
    } else if (pick === 'Reject All') {
      await this.decide(p, [], await vscode.window.showInputBox({ prompt: 'Why? (the agent reads it)', placeHolder: 'optional comment' }));
    } else if (pick === 'Review…') {
      await this.review(p.id);
    }
  }

  /** Opens the proposal's diff and asks which hunks to accept. */
  async review(id?: string): Promise<void> {
    const p = id ? this.pending.find((x) => x.id === id) : this.pending[0];
    if (!p) {
      void vscode.window.showInformationMessage('Loom: no change waits for your review.');
      return;
    }
    const diff = p.changes.map((c) => c.diff).join('');
    const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: diff });
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    const items = p.changes.flatMap((c) => c.hunks.map((h) => ({ ...hunkLabel(c.path, h), id: h.id, picked: true })));
    const chosen = await vscode.window.showQuickPick(items, {
      canPickMany: true, title: 'Loom: accept which hunks? (unchecked ones are rejected)', ignoreFocusOut: true,
    });
    if (!chosen) {
      return; // still pending: Loom: Review Proposed Change opens it again
    }
    let comment: string | undefined;
    if (chosen.length < items.length) {
      comment = await vscode.window.showInputBox({ prompt: 'Why reject? (the agent reads it)', placeHolder: 'optional comment', ignoreFocusOut: true });
    }
    await this.decide(p, chosen.map((c) => c.id), comment);
  }

  private async decide(p: ProposedChangesParams, accepted: string[], comment?: string): Promise<void> {
    const i = this.pending.indexOf(p);
    try {
      const res = await this.execute('loom.review', reviewArgs(p, accepted, comment)) as ReviewResult;
      if (i >= 0) {
        this.pending.splice(i, 1);
      }
      let msg = `Loom: applied ${res.applied.length} hunk(s), rejected ${res.rejected.length}.`;
      if (res.conflicts && res.conflicts.length > 0) {
        msg += ` Left out (you changed the same lines): ${res.conflicts.join(', ')}.`;
      }
      void vscode.window.showInformationMessage(msg);
    } catch (e) {
      if (i >= 0) {
        this.pending.splice(i, 1);
      }
      void vscode.window.showErrorMessage(`Loom: review: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Lists the checkpoints and rewinds to the one picked. */
  async restoreCheckpoint(): Promise<void> {
    const res = await this.execute('loom.checkpoints', {}) as CheckpointsResult;
    if (!res.checkpoints.length) {
      void vscode.window.showInformationMessage('Loom: no checkpoint yet; each of your prompts becomes one.');
      return;
    }
    const pick = await vscode.window.showQuickPick(res.checkpoints.map((c) => ({ ...checkpointLabel(c), turn: c.turn })).reverse(),
      { title: 'Loom: restore to before which prompt?' });
    if (!pick) {
      return;
    }
    const words: Record<string, string> = {
      both: 'Files and conversation', files: 'Files only (keep the conversation)', conversation: 'Conversation only (keep the files)',
    };
    const kind = await vscode.window.showQuickPick(restoreKinds.map((k) => ({ label: words[k], restore: k })), { title: `Restore to before turn ${pick.turn}` });
    if (!kind) {
      return;
    }
    try {
      const r = await this.execute('loom.rewind', { turn: pick.turn, restore: kind.restore }) as RewindResult;
      let msg = `Loom: restored to before turn ${pick.turn}.`;
      if (r.restored.length) {
        msg += ` Files: ${r.restored.join(', ')}.`;
      }
      if (r.kept.length) {
        msg += ` Your later edits were kept in ${r.kept.join(', ')}.`;
      }
      const again = await vscode.window.showInformationMessage(msg, 'Redo');
      if (again === 'Redo') {
        await this.redo();
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`Loom: rewind: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async redo(): Promise<void> {
    try {
      await this.execute('loom.redo', {});
      void vscode.window.showInformationMessage('Loom: the last rewind is undone.');
    } catch (e) {
      void vscode.window.showErrorMessage(`Loom: redo: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** loom/rewound: the rewound prompt comes back for editing. */
  async rewound(p: RewoundParams, ask: (prompt: string) => Promise<unknown>): Promise<void> {
    if (p.redone || !p.prompt) {
      return;
    }
    const edited = await vscode.window.showInputBox({ prompt: `Edit and send again your prompt of turn ${p.turn}`, value: p.prompt, ignoreFocusOut: true });
    if (edited && edited.trim() !== '') {
      await ask(edited);
    }
  }
}
