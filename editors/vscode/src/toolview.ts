// Tool calls in words: the server sends a call's arguments as one line of
// JSON (possibly cut at 200 characters); the card shows "$ npm test",
// "main.go:10-40" or "/TODO/ in src". No vscode imports: tested under node.

/** What a card says about a call. */
export interface ToolView {
  /** The arguments in words. */
  title: string;
  /** The file a call reads or edits, relative to the folder, if any. */
  path?: string;
}

/** Parses the one-line JSON arguments; a cut-off object yields its complete string fields. */
export function parseArguments(summary: string): Record<string, unknown> {
  try {
    const v = JSON.parse(summary);
    return v && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {};
  } catch {
    // Cut at 200 characters: take the string fields that are whole.
    const out: Record<string, unknown> = {};
    const re = /"([A-Za-z_]+)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)/g;
    for (let m = re.exec(summary); m; m = re.exec(summary)) {
      try {
        out[m[1]] = JSON.parse(m[2]);
      } catch { /* not a whole value */ }
    }
    // A string cut off mid-way: keep what there is, marked.
    const cut = /"([A-Za-z_]+)"\s*:\s*"((?:[^"\\]|\\.)*)$/.exec(summary);
    if (cut && !(cut[1] in out)) {
      try {
        out[cut[1]] = JSON.parse('"' + cut[2].replace(/\\$/, '') + '"') + '…';
      } catch { /* leave it out */ }
    }
    return out;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/** Describes a call of tool name with the server's summary of its arguments. */
export function describeTool(name: string, summary: string): ToolView {
  const a = parseArguments(summary);
  switch (name) {
    case 'bash': {
      const cmd = str(a.command);
      return { title: cmd ? '$ ' + cmd : summary };
    }
    case 'read_file': {
      const p = str(a.path);
      if (!p) {
        return { title: summary };
      }
      const off = num(a.offset);
      const lim = num(a.limit);
      let range = '';
      if (off && lim) {
        range = `:${off}-${off + lim - 1}`;
      } else if (off) {
        range = `:${off}-`;
      } else if (lim) {
        range = `:1-${lim}`;
      }
      return { title: p + range, path: p };
    }
    case 'grep': {
      const pat = str(a.pattern);
      if (!pat) {
        return { title: summary };
      }
      let t = `/${pat}/`;
      if (str(a.path)) {
        t += ` in ${a.path}`;
      }
      if (str(a.glob)) {
        t += ` (${a.glob})`;
      }
      return { title: t };
    }
    case 'list_files': {
      const p = str(a.path) ?? '.';
      return { title: str(a.pattern) ? `${p} (${a.pattern})` : p };
    }
    case 'edit_file':
    case 'write_file': {
      const p = str(a.path);
      return p ? { title: p, path: p } : { title: summary };
    }
    default:
      return { title: summary };
  }
}
