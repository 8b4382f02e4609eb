// VS Code's inputs for loom/elicit (elicit.ts holds the logic).
import * as vscode from 'vscode';
import { ElicitUI, ElicitItem } from './elicit';

export { elicit } from './elicit';

/** The form is asked with a modal message, input boxes and quick picks. */
export const vscodeElicitUI: ElicitUI = {
  message: async (text, detail, buttons) => vscode.window.showInformationMessage(text, { modal: true, detail }, ...buttons),
  input: async (o) => vscode.window.showInputBox({
    title: o.title, prompt: o.prompt, value: o.value, password: o.password, placeHolder: o.placeHolder, ignoreFocusOut: true,
  }),
  pick: async (items: ElicitItem[], o) => {
    if (o.canPickMany) {
      const got = await vscode.window.showQuickPick(items, { title: o.title, placeHolder: o.placeHolder, canPickMany: true, ignoreFocusOut: true });
      return got?.map((i) => i.value);
    }
    const qp = [...items].sort((a, b) => Number(!!b.picked) - Number(!!a.picked)); // the default first
    const got = await vscode.window.showQuickPick(qp, { title: o.title, placeHolder: o.placeHolder, ignoreFocusOut: true });
    return got ? [got.value] : undefined;
  },
  openExternal: async (url) => { await vscode.env.openExternal(vscode.Uri.parse(url, true)); },
};
