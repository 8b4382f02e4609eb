// Trust and pulled settings: loom-lsp asks for the "loom" section with
// workspace/configuration (as gopls does) and never takes trust from
// pushed settings; VS Code's workspace trust reaches it only through
// initializationOptions (experimental.loom.workspaceTrust), and the user
// confirms a folder's changed settings with "Loom: Trust this Folder".
// No vscode imports: tested under node.

/** The section loom-lsp asks for. */
export const loomSection = 'loom';

/** The palette command that trusts a folder (server command loom.trust). */
export const trustFolderCommand = 'loom.trustFolder';

/**
 * Answers a workspace/configuration request: the items asking for the
 * "loom" section get loom-lsp's keys (snake_case, no trust), the others
 * keep what VS Code answered (theirs, in order).
 */
export function answerConfiguration(items: readonly { section?: string }[], theirs: readonly unknown[], loom: () => object): unknown[] {
  return items.map((it, i) => (it.section === loomSection ? loom() : theirs[i] ?? null));
}
