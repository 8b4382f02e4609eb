// The text a file had before an edit, from its text now and the edit's
// unified diff, for VS Code's diff editor ("Open diff"). No vscode
// imports: tested under node.

interface Hunk { newStart: number; lines: string[] }

function parseHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let cur: Hunk | undefined;
  for (const line of diff.split('\n')) {
    const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m) {
      cur = { newStart: Number(m[1]), lines: [] };
      hunks.push(cur);
    } else if (cur && (line.startsWith(' ') || line.startsWith('+') || line.startsWith('-'))) {
      if (!(line.startsWith('+++') || line.startsWith('---')) || cur.lines.length > 0) {
        cur.lines.push(line);
      }
    }
  }
  return hunks;
}

/**
 * Reverses diff on after (the text with the edit applied). Returns
 * undefined when after no longer matches the diff (edited since).
 */
export function beforeText(after: string, diff: string): string | undefined {
  const hunks = parseHunks(diff);
  if (hunks.length === 0) {
    return undefined;
  }
  const lines = after.split('\n');
  const out: string[] = [];
  let i = 0; // index into lines
  for (const h of hunks) {
    // A hunk adding to an empty file says +0,0 … start at line 1 then.
    const start = Math.max(h.newStart, 1) - 1;
    if (start < i) {
      return undefined;
    }
    while (i < start && i < lines.length) {
      out.push(lines[i++]);
    }
    for (const l of h.lines) {
      const body = l.slice(1);
      if (l[0] === '-') {
        out.push(body);
        continue;
      }
      if (lines[i] !== body) {
        return undefined;
      }
      i++;
      if (l[0] === ' ') {
        out.push(body);
      }
    }
  }
  while (i < lines.length) {
    out.push(lines[i++]);
  }
  return out.join('\n');
}
