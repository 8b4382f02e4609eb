// Times in words for the conversation list. No imports: the webview
// bundles it, and it is tested under node.

/**
 * When, in words, relative to now: "just now", "3 min ago", "2 h ago",
 * "yesterday", "5 days ago", then the date. "" for no or a bad time.
 */
export function relativeTime(iso: string | undefined, now: number): string {
  const t = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(t)) {
    return '';
  }
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) {
    return 'just now';
  }
  const min = Math.round(s / 60);
  if (min < 60) {
    return `${min} min ago`;
  }
  const h = Math.round(min / 60);
  if (h < 24) {
    return `${h} h ago`;
  }
  const d = Math.round(h / 24);
  if (d === 1) {
    return 'yesterday';
  }
  if (d < 30) {
    return `${d} days ago`;
  }
  return new Date(t).toISOString().slice(0, 10);
}
