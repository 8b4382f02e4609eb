// The few git reads the changed-files bar needs: the repository's top,
// a file's counts over the agent's commits, and a file's text at a
// commit (the left side of "open diff"). Read-only; every write goes
// through loom-lsp. No vscode imports: tested under node with real git.
import { execFile } from 'child_process';
import { parseNumstat } from './filesbar';

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, maxBuffer: 64 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`git ${args[0]}: ${stderr.trim() || err.message}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** The top of the repository folder is in. */
export async function gitTop(folder: string): Promise<string> {
  return (await git(folder, ['rev-parse', '--show-toplevel'])).trim();
}

/**
 * Lines added and removed in path (relative to top) by the agent's
 * commits, oldest first: from the first one's parent to the last one.
 */
export async function agentCounts(top: string, commits: readonly string[], path: string): Promise<{ added: number; removed: number }> {
  const out = await git(top, ['diff', '--numstat', '--no-renames', `${commits[0]}^`, commits[commits.length - 1], '--', path]);
  return parseNumstat(out);
}

/** path's text at rev ("" when the file is not there: created since). */
export async function textAt(top: string, rev: string, path: string): Promise<string> {
  try {
    return await git(top, ['show', `${rev}:${path}`]);
  } catch {
    return '';
  }
}
