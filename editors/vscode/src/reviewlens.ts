// A proposal in VS Code's diff editor: left the file as it is now, right
// the file with every proposed hunk (both read-only documents of the
// loom-proposal scheme), and above each hunk on the right a CodeLens
// Accept hunk / Reject hunk that decides it in the same ReviewBook as
// the panel's card. When the file no longer matches the proposal, the
// proposal's unified diff opens instead, with the CodeLens on each @@.
// Needs diffEditor.codeLens, which the extension turns on by default
// (package.json configurationDefaults).
import * as path from 'path';
import * as vscode from 'vscode';
import { headerLines, proposedText, ReviewBook, textBefore } from './reviewbook';
import type { ProposedChange, ProposedChangesParams } from './reviewwire';
import type { HunkDecision } from './shared/review';

/** The scheme of the diff editor's two sides. */
export const proposalScheme = 'loom-proposal';

/** The command a CodeLens runs: (proposal id, hunk ids or "all", decision or undefined to undecide). */
export const decideCommand = 'loom.reviewHunk';

type Side = 'current' | 'proposed' | 'diff';

/** What one side of an opened diff shows. */
interface Opened { id: string; path: string; side: Side; text: string; anchors: Map<string, number> }

/** ReviewLens serves the diff's documents and their CodeLens. */
export class ReviewLens implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly docs = new Map<string, Opened>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly subs: vscode.Disposable[] = [];
  private warned = false;

  constructor(private readonly book: ReviewBook,
    decide: (id: string, hunks: string[] | 'all', d: HunkDecision | undefined) => Promise<void>) {
    this.subs.push(
      vscode.workspace.registerTextDocumentContentProvider(proposalScheme, this),
      vscode.languages.registerCodeLensProvider({ scheme: proposalScheme }, this),
      vscode.commands.registerCommand(decideCommand, (id: string, hunks: string[] | 'all', d?: HunkDecision) => decide(id, hunks, d)),
      this.changed,
    );
  }

  /** The CodeLens may have changed (a decision, a result). */
  refresh(): void {
    this.changed.fire();
  }

  /** Opens the diff of one file of proposal p. */
  async open(p: ProposedChangesParams, file: string): Promise<void> {
    const c = p.changes.find((x) => x.path === file);
    if (!c) {
      return;
    }
    this.warnIfLensOff();
    if (p.command || c.kind === 'command') {
      // Already on disk: left the file before the command, right the file now.
      const now = await currentText(p.folder, c);
      const before = now === undefined ? undefined : textBefore(now, c.hunks);
      if (now !== undefined && before) {
        const left = this.put({ id: p.id, path: c.path, side: 'current', text: before.text, anchors: new Map() });
        const right = this.put({ id: p.id, path: c.path, side: 'proposed', text: now, anchors: before.anchors });
        await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(c.path)}: before ↔ after \`${p.command ?? 'a command'}\``, { preview: true });
        return;
      }
      await this.showDiff(p, c);
      return;
    }
    const current = c.kind === 'create' ? '' : await currentText(p.folder, c);
    const proposed = current === undefined ? undefined : proposedText(current, c.hunks);
    if (current === undefined || !proposed) {
      await this.showDiff(p, c);
      return;
    }
    const left = this.put({ id: p.id, path: c.path, side: 'current', text: current, anchors: new Map() });
    const right = this.put({ id: p.id, path: c.path, side: 'proposed', text: proposed.text, anchors: proposed.anchors });
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(c.path)}: now ↔ Loom's proposal`, { preview: true });
  }

  /** The file changed since (or cannot be read): the proposal's own unified diff, CodeLens on each @@. */
  private async showDiff(p: ProposedChangesParams, c: ProposedChange): Promise<void> {
    const anchors = new Map<string, number>();
    headerLines(c.diff).forEach((line, i) => c.hunks[i] && anchors.set(c.hunks[i].id, line));
    const uri = this.put({ id: p.id, path: c.path, side: 'diff', text: c.diff, anchors });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'diff');
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  private put(o: Opened): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: proposalScheme, path: '/' + o.path, query: `id=${encodeURIComponent(o.id)}&side=${o.side}` });
    this.docs.set(uri.toString(), o);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString())?.text ?? '';
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const o = this.docs.get(doc.uri.toString());
    const p = o ? this.book.get(o.id) : undefined;
    if (!o || !p || o.side === 'current') {
      return [];
    }
    const top = new vscode.Range(0, 0, 0, 0);
    const c = p.params.changes.find((x) => x.path === o.path);
    if (!c) {
      return [];
    }
    if (p.state === 'sending') {
      return [new vscode.CodeLens(top, { title: 'Loom: applying your decision…', command: '' })];
    }
    if (p.state !== 'open') {
      const words = p.state === 'decided' && p.result
        ? `Loom: ${p.params.command ? 'kept' : 'applied'} ${p.result.applied.length ? p.result.applied.join(', ') : 'nothing'}; ` +
          `${p.params.command ? 'discarded' : 'rejected'} ${p.result.rejected.length ? p.result.rejected.join(', ') : 'nothing'}`
        : 'Loom: this proposal was not reviewed (the turn ended)';
      return [new vscode.CodeLens(top, { title: words, command: '' })];
    }
    const out: vscode.CodeLens[] = [];
    const left = this.book.undecided(o.id).length;
    const total = p.params.changes.reduce((n, x) => n + x.hunks.length, 0);
    out.push(new vscode.CodeLens(top, { title: `Loom: ${left} of ${total} hunks left to decide (sent once all are)`, command: '' }));
    for (const h of c.hunks) {
      const line = Math.min(o.anchors.get(h.id) ?? 0, Math.max(doc.lineCount - 1, 0));
      const r = new vscode.Range(line, 0, line, 0);
      const d = p.decisions.get(h.id);
      const lens = (title: string, tooltip: string, decision: HunkDecision | undefined) =>
        new vscode.CodeLens(r, { title, tooltip, command: decideCommand, arguments: [o.id, [h.id], decision] });
      const [acc, rej, accd, rejd] = p.params.command ? ['Keep', 'Discard', 'kept', 'discarded'] : ['Accept', 'Reject', 'accepted', 'rejected'];
      if (d === undefined) {
        out.push(lens(`${acc} hunk ${h.id}`, `${acc} hunk ${h.id} of ${c.path}`, 'accept'), lens(`${rej} hunk ${h.id}`, `${rej} hunk ${h.id} of ${c.path}`, 'reject'));
      } else {
        const other: HunkDecision = d === 'accept' ? 'reject' : 'accept';
        out.push(lens(`Hunk ${h.id}: ${d === 'accept' ? accd : rejd} (undo)`, 'Take the decision back', undefined),
          lens(`${other === 'accept' ? acc : rej} instead`, `${other === 'accept' ? acc : rej} hunk ${h.id}`, other));
      }
    }
    return out;
  }

  /** Says once that the diff editor's CodeLens is turned off, and where to decide then. */
  private warnIfLensOff(): void {
    if (this.warned || vscode.workspace.getConfiguration('diffEditor').get<boolean>('codeLens')) {
      return;
    }
    this.warned = true;
    void vscode.window.showInformationMessage(
      'Loom: the diff editor shows no Accept / Reject above each hunk while "diffEditor.codeLens" is off; decide in the chat panel\'s card, or turn the setting on.',
      'Turn On').then((b) => b && vscode.workspace.getConfiguration('diffEditor').update('codeLens', true, vscode.ConfigurationTarget.Global));
  }

  dispose(): void {
    for (const s of this.subs) {
      s.dispose();
    }
  }
}

/** The text of a proposal's file as the user sees it: the open buffer, else the disk. */
async function currentText(folder: string, c: ProposedChange): Promise<string | undefined> {
  const uri = c.uri ? vscode.Uri.parse(c.uri, true) : vscode.Uri.file(path.join(folder, c.path));
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) {
    return open.getText();
  }
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}
