// loom.ask's argument as VS Code hands it over: a prompt string (from a
// keybinding or another extension) or the server's AskArgs object (from
// the code actions "Ask Loom to fix: …" and "Ask Loom about this"). No
// vscode imports: tested under node.
import type { AskArgs } from './protocol';
import type { NoticeAction } from './shared/messages';

/** The AskArgs of arg, or undefined when arg carries no prompt (ask the user). */
export function parseAskArgument(arg: unknown): AskArgs | undefined {
  if (typeof arg === 'string') {
    return arg.trim() === '' ? undefined : { prompt: arg };
  }
  if (!arg || typeof arg !== 'object') {
    return undefined;
  }
  const a = arg as Partial<AskArgs>;
  if (typeof a.prompt !== 'string' || a.prompt.trim() === '') {
    return undefined;
  }
  const out: AskArgs = { prompt: a.prompt };
  if (typeof a.uri === 'string' && a.uri !== '') {
    out.uri = a.uri;
  }
  const s = a.selection;
  if (s && typeof s === 'object' && s.range && typeof s.range === 'object') {
    out.selection = { range: s.range };
    if (typeof s.text === 'string' && s.text !== '') {
      out.selection.text = s.text;
    }
    if (typeof s.diagnostic === 'string' && s.diagnostic !== '') {
      out.selection.diagnostic = s.diagnostic;
    }
  }
  return out;
}

/** Says what a loom.ask error means to a VS Code user, with the button that helps. */
export function explainAskError(message: string): { text: string; action?: NoticeAction } {
  if (/model|base_url|api_key|provider/i.test(message)) {
    return {
      text: message.trim() + '\n\nIn VS Code: set loom.model.provider, loom.model.baseUrl and loom.model.name ' +
        '(and loom.model.apiKeyEnv for a server that needs a key) in Settings.',
      action: 'openSettings',
    };
  }
  return { text: message };
}
