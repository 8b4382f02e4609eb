// Finding the loom-lsp binary before starting it, so a missing one is
// said plainly (with a way to install it) instead of five crash pop-ups.
// No vscode imports: tested under node.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile() || (process.platform !== 'win32' && (st.mode & 0o111) === 0)) {
      return false;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The path of the executable name: name itself when it has a slash (a
 * leading ~/ is the home directory), else the first match on pathEnv.
 * Undefined when there is none.
 */
export function findExecutable(name: string, pathEnv: string): string | undefined {
  let n = name.trim();
  if (n === '') {
    return undefined;
  }
  if (n.startsWith('~/')) {
    n = path.join(os.homedir(), n.slice(2));
  }
  if (n.includes('/') || n.includes(path.sep)) {
    return isExecutable(n) ? n : undefined;
  }
  const exts = process.platform === 'win32' ? ['.exe', ''] : [''];
  for (const dir of pathEnv.split(path.delimiter)) {
    if (dir === '') {
      continue;
    }
    for (const ext of exts) {
      const p = path.join(dir, n + ext);
      if (isExecutable(p)) {
        return p;
      }
    }
  }
  return undefined;
}
