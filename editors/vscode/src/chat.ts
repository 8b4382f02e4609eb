// The chat view: an output channel that streams each turn's text as it
// arrives, with one line per finished tool call.
import * as vscode from 'vscode';
import * as path from 'path';
import { DeltaAssembler } from './assembler';
import type { DisplayMessageParams, HistoryResult, ToolCallParams } from './protocol';

export class ChatView implements vscode.Disposable {
  readonly assembler = new DeltaAssembler();
  private readonly channel: vscode.OutputChannel;
  /** "folder#turn" of the text the channel's last line belongs to. */
  private openKey: string | undefined;
  private atLineStart = true;

  constructor() {
    this.channel = vscode.window.createOutputChannel('Loom Chat', 'markdown');
  }

  show(preserveFocus = true): void {
    this.channel.show(preserveFocus);
  }

  private write(text: string): void {
    if (text === '') {
      return;
    }
    this.channel.append(text);
    this.atLineStart = text.endsWith('\n');
  }

  private newBlock(lines: string[]): void {
    if (!this.atLineStart) {
      this.write('\n');
    }
    this.write('\n' + lines.join('\n') + '\n');
    this.openKey = undefined;
  }

  prompt(folder: string | undefined, prompt: string): void {
    this.newBlock([folder ? `## You (${path.basename(folder)})` : '## You', prompt]);
  }

  delta(p: DisplayMessageParams): void {
    const v = this.assembler.push(p);
    if (v.kind === 'stale') {
      return;
    }
    if (v.kind === 'gap') {
      this.newBlock([`> [loom: ${v.missing} message(s) lost; the chat is redrawn when the turn ends]`]);
    }
    const key = `${p.folder}#${p.turn}`;
    if (this.openKey !== key) {
      this.newBlock([`## Loom (${path.basename(p.folder)}, turn ${p.turn})`]);
      this.openKey = key;
    }
    this.write(p.text);
  }

  tool(p: ToolCallParams): void {
    // The output channel can't update a line in place: show the start and
    // the end of each call.
    if (p.status !== 'running' && p.status !== 'succeeded' && p.status !== 'failed' && p.status !== 'cancelled') {
      return;
    }
    if (p.status === 'running' && p.progress) {
      return; // progress updates go to the progress notification
    }
    let line = `  [${p.status}] ${p.name} ${p.summary}`;
    if (p.status !== 'running' && p.progress) {
      const first = p.progress.split('\n')[0];
      line += ' -> ' + (first.length > 120 ? first.slice(0, 117) + '...' : first);
    }
    if (!this.atLineStart) {
      this.write('\n');
    }
    this.write(line + '\n');
  }

  note(text: string): void {
    this.newBlock([text]);
  }

  redraw(h: HistoryResult): void {
    this.channel.clear();
    this.atLineStart = true;
    this.openKey = undefined;
    this.assembler.clearTexts(h.folder);
    this.assembler.takeGap(h.folder);
    const out: string[] = [`# Loom transcript (${path.basename(h.folder)})`];
    for (const m of h.messages ?? []) {
      if (m.role === 'user') {
        out.push('', '## You', m.content);
      } else if (m.role === 'assistant') {
        out.push('', '## Loom');
        if (m.content) {
          out.push(m.content);
        }
        for (const tc of m.toolCalls ?? []) {
          out.push(`  [call] ${tc.name} ${tc.arguments.replace(/\s+/g, ' ')}`);
        }
      } else if (m.role === 'tool') {
        const first = (m.content ?? '').split('\n')[0];
        out.push('  [result] ' + (first.length > 120 ? first.slice(0, 117) + '...' : first));
      }
    }
    this.write(out.join('\n') + '\n');
  }

  dispose(): void {
    this.channel.dispose();
  }
}
