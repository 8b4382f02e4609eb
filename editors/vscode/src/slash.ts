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

/** The commands whose name starts with what follows the slash ("/co" → compact). */
export function completeSlash(line: string): SlashCommand[] {
  const m = /^\/(\S*)$/.exec(line);
  if (!m) {
    return [];
  }
  const word = m[1].toLowerCase();
  return slashCommands.filter((c) => c.name.startsWith(word));
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
