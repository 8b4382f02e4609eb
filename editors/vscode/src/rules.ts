// "Loom: Approval Rules…": the folder's approval rules (loom.rules), one
// picked to remove (loom.removeRule) after a confirmation. The rules are
// the user's, kept by loom-lsp outside the repository; this is where a
// VS Code user takes back an "Always allow …" they gave.
import * as vscode from 'vscode';
import { SavedRule, ruleWords, savedRules } from './approval';
import { Commands } from './protocol';

/** What the command needs of the chat: the shown folder and the server. */
export interface RulesHost {
  current(): string | undefined;
  exec<T>(command: string, args: object): Promise<T>;
}

/** Shows the shown folder's rules; removes the one the user picks and confirms. */
export async function manageRules(host: RulesHost): Promise<void> {
  const folder = host.current();
  if (!folder) {
    void vscode.window.showInformationMessage('Loom: open a folder first.');
    return;
  }
  const uri = vscode.Uri.file(folder).toString();
  const res = await host.exec<{ allowCommands?: SavedRule[]; allowMcpServers?: string[]; allowFetchHosts?: string[] }>(Commands.rules, { uri });
  const rules = savedRules(res);
  if (rules.length === 0) {
    void vscode.window.showInformationMessage('Loom: no approval rules in this folder: commands, MCP tools and fetches are asked (or as loom.tools.bash and loom.mcp.approve say).');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    rules.map((r) => ({ label: ruleWords(r), description: r.fetchHost ? 'fetched without asking' : 'runs without asking', rule: r })),
    { title: 'Loom: approval rules of this folder', placeHolder: 'Pick a rule to remove it' });
  if (!pick) {
    return;
  }
  const yes = await vscode.window.showWarningMessage(`Remove the rule "${pick.label}"? They will be asked again.`, { modal: true }, 'Remove');
  if (yes !== 'Remove') {
    return;
  }
  await host.exec(Commands.removeRule, { uri, ...pick.rule });
  void vscode.window.showInformationMessage(`Loom: removed the rule ${pick.label}.`);
}
