// loom.ask's context items (the chips of the composer): their words for
// a server that does not take context yet, and the labels shown. No
// vscode imports: tested under node.
import type { ContextItem, DiagnosticItem } from './shared/messages';

/** The most of one attached text sent inline (head kept, the rest said). */
export const maxInlineText = 20_000;

/**
 * The context as plain text, appended to the prompt when the server does
 * not take loom.ask's context (an older loom-lsp): texts and problems
 * in full (capped), files and folders by path (the agent reads them).
 */
export function contextAsText(items: readonly ContextItem[], rel: (uri: string) => string = (u) => u): string {
  const parts: string[] = [];
  for (const it of items) {
    switch (it.kind) {
      case 'file': {
        const r = it.range ? `:${it.range.start.line + 1}-${it.range.end.line + 1}` : '';
        parts.push(`Attached: ${rel(it.uri)}${r}`);
        break;
      }
      case 'diagnostics':
        parts.push(`Problems (${it.label}):\n` + (it.items.length === 0 ? 'none' : it.items.map((d) => diagnosticLine(d, rel)).join('\n')));
        break;
      case 'text':
        parts.push(`${it.label}:\n${cap(it.text)}`);
        break;
    }
  }
  return parts.join('\n\n');
}

/** One problem on a line: "a.go:3:5 error: undefined: x (compiler)". */
export function diagnosticLine(d: DiagnosticItem, rel: (uri: string) => string = (u) => u): string {
  const src = d.source ? ` (${d.source}${d.code ? ' ' + d.code : ''})` : '';
  return `${rel(d.uri)}:${d.range.start.line + 1}:${d.range.start.character + 1} ${d.severity}: ${d.message}${src}`;
}

function cap(text: string): string {
  return text.length <= maxInlineText ? text : text.slice(0, maxInlineText) + `\n… (${text.length - maxInlineText} more characters)`;
}

/** Whether a loom.ask error says the server does not know the context field. */
export function contextUnsupported(message: string): boolean {
  return /unknown field "context"/.test(message);
}
