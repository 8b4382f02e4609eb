// loom/elicit: an MCP server's question (elicitation), asked with VS
// Code's own inputs: the question with Fill in / Decline, then one input
// per field (a password box for a secret, a pick list for a choice or
// yes/no), or, for a URL, the page offered to open. Validation is the
// server's: a bad answer comes back with its problems and the values
// typed, and is asked again. No vscode imports: tested under node with
// stubs.
import type { ElicitParams, ElicitResult, Field } from './wire.gen';

/** A choice in a pick list. */
export interface ElicitItem {
  label: string;
  description?: string;
  value: string;
  picked?: boolean;
}

/** The inputs the form is asked with (VS Code's, or a test's). */
export interface ElicitUI {
  /** A modal question with buttons: the button picked, undefined when dismissed. */
  message(text: string, detail: string, buttons: string[]): Promise<string | undefined>;
  /** A text input; undefined when dismissed. */
  input(o: { title: string; prompt: string; value: string; password: boolean; placeHolder: string }): Promise<string | undefined>;
  /** A pick list; the values picked, undefined when dismissed. */
  pick(items: ElicitItem[], o: { title: string; placeHolder: string; canPickMany: boolean }): Promise<string[] | undefined>;
  /** Opens a URL in the browser, because the user asked to. */
  openExternal(url: string): Promise<void>;
}

export const fillIn = 'Fill in';
export const decline = 'Decline';
export const openPage = 'Open page';

/** The field's label for a person: its title, else its name. */
export function label(f: Field): string {
  return f.title || f.name;
}

/** What the input says under a field: its description, required, default. */
export function prompt(f: Field): string {
  const parts: string[] = [];
  if (f.description) {
    parts.push(f.description);
  }
  if (f.required) {
    parts.push('required');
  }
  if (f.hasDefault && !f.secret) {
    parts.push(`default: ${f.default}`);
  }
  return parts.join(' · ');
}

/** Asks the user the server's question; never throws. */
export async function elicit(p: ElicitParams, ui: ElicitUI): Promise<ElicitResult> {
  const head = `MCP server ${p.server} asks: ${p.message}`;
  if (p.mode === 'url') {
    const b = await ui.message(head, `Open this page to go on (Loom does not open it by itself):\n${p.url ?? ''}`, [openPage, decline]);
    if (b === openPage && p.url) {
      await ui.openExternal(p.url);
      return { action: 'accept' };
    }
    return { action: b === decline ? 'decline' : 'cancel' };
  }
  const fields = p.fields ?? [];
  const problems = p.problems ?? [];
  const detail = problems.length > 0
    ? `Not sent, please correct:\n${problems.join('\n')}`
    : fields.map((f) => `${label(f)}${f.required ? ' (required)' : ''}`).join(', ');
  const b = await ui.message(head, detail, [fillIn, decline]);
  if (b !== fillIn) {
    return { action: b === decline ? 'decline' : 'cancel' };
  }
  const values: Record<string, string> = {};
  for (const [i, f] of fields.entries()) {
    const v = await askField(f, `${p.server}: ${label(f)} (${i + 1}/${fields.length})`, p.values?.[f.name], ui);
    if (v === undefined) {
      return { action: 'cancel' };
    }
    values[f.name] = v;
  }
  return { action: 'accept', values };
}

/** Asks one field; undefined when dismissed. An empty answer takes the default. */
async function askField(f: Field, title: string, previous: string | undefined, ui: ElicitUI): Promise<string | undefined> {
  const placeHolder = prompt(f);
  const start = previous ?? (f.hasDefault && !f.secret ? f.default ?? '' : '');
  if (f.type === 'boolean') {
    const yes = start === '' ? undefined : ['true', 'yes', 'y', '1', 'on'].includes(start.toLowerCase());
    const got = await ui.pick([
      { label: 'Yes', value: 'true', picked: yes === true },
      { label: 'No', value: 'false', picked: yes === false },
    ], { title, placeHolder, canPickMany: false });
    return got?.[0];
  }
  if (f.enum && f.enum.length > 0) {
    const chosen = new Set(start.split(',').map((s) => s.trim()));
    const items = f.enum.map((v, i) => ({
      label: f.enumTitles?.[i] || v, description: f.enumTitles?.[i] && f.enumTitles[i] !== v ? v : undefined, value: v, picked: chosen.has(v),
    }));
    const got = await ui.pick(items, { title, placeHolder, canPickMany: !!f.multiple });
    return got?.join(',');
  }
  return ui.input({ title, prompt: placeHolder, value: start, password: !!f.secret, placeHolder: f.format ?? '' });
}
