// Paths as the panel shows them, shared by the webview and the tests.

/**
 * A path split for the bar: the tail (the file's name, or its last
 * characters when the name is long) never shrinks before the lead (the
 * folders), which is cut with an ellipsis: the ellipsis lands in the
 * middle of the path.
 */
export function splitPath(path: string, tailMax = 24): [lead: string, tail: string] {
  const slash = path.lastIndexOf('/');
  const name = slash >= 0 ? path.slice(slash + 1) : path;
  const cut = name.length > tailMax ? path.length - tailMax : slash + 1;
  return [path.slice(0, cut), path.slice(cut)];
}
