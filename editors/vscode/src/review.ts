// Rewind in VS Code, with VS Code's own UI: "Loom: Restore Checkpoint…"
// lists the turns and rewinds the files, the conversation or both;
// "Loom: Redo" undoes the last rewind. (The rewound prompt comes back in
// the panel's input: checkpoints.ts.) (A proposed change is reviewed in
// the chat panel's edit card and the diff editor: reviewpanel.ts.)
import * as vscode from 'vscode';
import { checkpointLabel, CheckpointsResult, restoreKinds, RewindResult } from './reviewwire';

type Execute = (command: string, arg: object) => Promise<unknown>;

export class ReviewController {
  constructor(private readonly execute: Execute) {}

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
}
