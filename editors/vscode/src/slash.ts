// The composer's slash commands: the list the completion shows and the
// parse of a typed line. No vscode imports: tested under node.
import type { SlashCommand } from './shared/messages';

/** Every slash command, in the order the completion lists them. */
export const slashCommands: readonly SlashCommand[] = [
  { name: 'new', help: 'Start a new conversation' },
  { name: 'compact', help: 'Summarise the conversation to free the model\'s context' },
  { name: 'undo', help: 'Undo the last auto-commit' },
  { name: 'rewind', help: 'Go back to an earlier point of the conversation' },
  { name: 'model', args: '[name]', help: 'Switch this conversation\'s model' },
  { name: 'status', help: 'Say the state, model, queue and approval rules' },
];

/**
 * The commands whose name starts with what follows the slash ("/co" →
 * compact): the panel's own, then the folder's custom commands and
 * skills (custom; one named like a panel command is left out: the
 * panel's runs).
 */
export function completeSlash(line: string, custom: readonly SlashCommand[] = []): SlashCommand[] {
  const m = /^\/(\S*)$/.exec(line);
  if (!m) {
    return [];
  }
  const word = m[1].toLowerCase();
  const own = new Set(slashCommands.map((c) => c.name));
  return [...slashCommands, ...custom.filter((c) => !own.has(c.name))].filter((c) => c.name.toLowerCase().startsWith(word));
}

/** A custom command or skill as loom.status lists it. */
export interface ServerCommand { name: string; description?: string; argumentHint?: string; scope?: string }

/**
 * The folder's custom commands and skills (loom.status' commands) as the
 * slash menu lists them; sent as prompts ("/name args"), which loom-lsp
 * expands.
 */
export function customCommands(list: readonly ServerCommand[] | undefined): SlashCommand[] {
  return (list ?? []).filter((c) => typeof c?.name === 'string' && c.name !== '').map((c) => ({
    name: c.name,
    ...(c.argumentHint ? { args: c.argumentHint } : {}),
    help: c.description?.trim() || (c.scope === 'user' ? 'Your custom command' : 'A custom command of this folder'),
    custom: true,
  }));
}

/**
 * A typed line as a slash command: its name and arguments; undefined when
 * the line is not one (a prompt that starts with "/usr/bin" is a prompt).
 */
export function parseSlash(line: string): { name: string; args: string } | undefined {
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!m || !slashCommands.some((c) => c.name === m[1])) {
    return undefined;
  }
  return { name: m[1], args: (m[2] ?? '').trim() };
}
