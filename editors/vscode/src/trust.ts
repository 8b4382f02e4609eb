// Trust and pulled settings: loom-lsp asks for the "loom" section with
// workspace/configuration (as gopls does) and never takes trust from
// pushed settings; VS Code's workspace trust reaches it only through
// initializationOptions (experimental.loom.workspaceTrust), and the user
// confirms a folder's changed settings with "Loom: Trust this Folder".
// No vscode imports: tested under node.

/** The section loom-lsp asks for. */
export const loomSection = 'loom';

/**
 * The section a loom-lsp that knows experimental.loom.userSettings also
 * asks for: the user's own settings (VS Code's user settings, which no
 * repository fills), applied without the folder's trust. When it is
 * asked, the loom section carries the workspace's settings only.
 */
export const userSection = 'loom.user';

/** Which of the settings an answer carries. */
export type SettingsScope = 'all' | 'user' | 'workspace';

/** The palette command that trusts a folder (server command loom.trust). */
export const trustFolderCommand = 'loom.trustFolder';

/**
 * Answers a workspace/configuration request: the items asking for the
 * "loom" section get loom-lsp's keys (snake_case, no trust) — the
 * workspace's settings only when the user's are asked for apart
 * (loom.user) — the others keep what VS Code answered (theirs, in order).
 */
export function answerConfiguration(items: readonly { section?: string }[], theirs: readonly unknown[],
  loom: (scope: SettingsScope) => object): unknown[] {
  const apart = items.some((it) => it.section === userSection);
  return items.map((it, i) => it.section === loomSection ? loom(apart ? 'workspace' : 'all')
    : it.section === userSection ? loom('user') : theirs[i] ?? null);
}
