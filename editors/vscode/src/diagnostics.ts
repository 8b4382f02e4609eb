// loom/diagnostics: loom-lsp asks for the problems VS Code's language
// servers show in a file, before the agent's edit and after it, and tells
// the model only the ones the edit introduced. No vscode imports: tested
// under node with stubs (extension.ts passes the real VS Code).

/** loom/diagnostics' params. */
export interface DiagnosticsParams {
  uri: string;
  /** Set after loom's edit: wait for the language servers' new answer. */
  after: boolean;
  /** The longest wait, in milliseconds. */
  waitMs: number;
}

/** A diagnostic in LSP's shape (what the server reads). */
export interface LspDiagnostic {
  range: { start: { line: number; character: number } };
  severity?: number;
  code?: string | number;
  source?: string;
  message: string;
}

export interface DiagnosticsDeps {
  /** Whether a text document of the file is open. */
  isOpen(uri: string): boolean;
  /** Opens the file's document without showing it; false when it cannot. */
  open(uri: string): Promise<boolean>;
  /** The problems VS Code shows for the file now. */
  get(uri: string): LspDiagnostic[];
  /** Calls back when the file's problems change. */
  onChange(uri: string, cb: () => void): { dispose(): void };
}

/** How long the language servers must be quiet after a change. */
const settleMs = 100;

/**
 * Answers loom/diagnostics: the file's problems, or null when VS Code
 * cannot look at the file (loom then asks a language server of its own).
 * A file it had to open, and every question after an edit, waits (at most
 * waitMs) for the language servers to publish anew.
 */
export async function answerDiagnostics(p: DiagnosticsParams, deps: DiagnosticsDeps): Promise<{ diagnostics: LspDiagnostic[] | null }> {
  let fresh = false;
  if (!deps.isOpen(p.uri)) {
    if (!(await deps.open(p.uri))) {
      return { diagnostics: null };
    }
    fresh = true;
  }
  if ((p.after || fresh) && p.waitMs > 0) {
    await waitForChange(p.uri, p.waitMs, deps);
  }
  return { diagnostics: deps.get(p.uri) };
}

/** Resolves once the file's problems changed and stayed so settleMs, or after waitMs. */
function waitForChange(uri: string, waitMs: number, deps: DiagnosticsDeps): Promise<void> {
  return new Promise((resolve) => {
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      clearTimeout(limit);
      clearTimeout(quiet);
      sub.dispose();
      resolve();
    };
    const limit = setTimeout(done, waitMs);
    const sub = deps.onChange(uri, () => {
      clearTimeout(quiet);
      quiet = setTimeout(done, settleMs);
    });
  });
}
