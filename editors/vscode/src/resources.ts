// MCP resources as "@" items: what loom.mcpResources lists (each ready
// server's resources and resource templates) offered in the attach pick
// next to the files, and the one chosen turned into loom.ask's context
// item (kind "resource"): a template's variables are asked first. No
// vscode imports: tested under node with stubs.
import type { ContextItem } from './shared/messages';
import type { MCPResource } from './wire.gen';

/** One resource in the attach pick. */
export interface ResourceChoice {
  label: string;
  description: string;
  detail?: string;
  resource: MCPResource;
}

/** The resources as pick items: "server: title", the URI (or template) beside it. */
export function resourceChoices(list: readonly MCPResource[] | null | undefined): ResourceChoice[] {
  return (list ?? []).map((r) => ({
    label: `$(${r.template ? 'symbol-parameter' : 'plug'}) ${r.server}: ${r.title || r.name}`,
    description: r.template ?? r.uri ?? '',
    ...(r.description ? { detail: firstLine(r.description) } : {}),
    resource: r,
  }));
}

/** Asks one value of a template's variable; undefined when dismissed. */
export type AskValue = (o: { title: string; prompt: string; placeHolder: string }) => Promise<string | undefined>;

/**
 * The context item for resource r; a template's variables are asked one
 * by one (undefined when one is dismissed or left empty: nothing attached).
 */
export async function resourceItem(r: MCPResource, ask: AskValue): Promise<ContextItem | undefined> {
  if (!r.template) {
    return r.uri ? { kind: 'resource', label: `${r.server}: ${r.title || r.name}`, server: r.server, uri: r.uri } : undefined;
  }
  const vars = r.variables ?? [];
  const args: Record<string, string> = {};
  for (const [i, v] of vars.entries()) {
    const val = (await ask({
      title: `${r.server}: ${r.title || r.name} (${i + 1}/${vars.length})`,
      prompt: `${v} of ${r.template}`,
      placeHolder: v,
    }))?.trim();
    if (!val) {
      return undefined;
    }
    args[v] = val;
  }
  return { kind: 'resource', label: `${r.server}: ${fill(r.template, args)}`, server: r.server, template: r.template, arguments: args };
}

/** The template with its simple {name} expressions filled in, for the chip's label (loom-lsp expands it for real). */
export function fill(template: string, args: Record<string, string>): string {
  return template.replace(/\{([A-Za-z0-9_.%]+)\}/g, (m, name: string) => args[name] ?? m);
}

function firstLine(s: string): string {
  const line = s.split('\n')[0].trim();
  return line.length > 120 ? line.slice(0, 119) + '…' : line;
}
