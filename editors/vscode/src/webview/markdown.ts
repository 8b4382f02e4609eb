// Markdown for the panel: markdown-it with HTML disabled, highlight.js for
// code blocks (with Copy and Insert), GitHub task lists as read-only
// checkboxes (markdown-it-task-lists), and an update in place for
// streamed text (morphdom: text nodes grow, settled blocks stay).
import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';
import taskLists from 'markdown-it-task-lists';
import morphdom from 'morphdom';

const md = new MarkdownIt({
  html: false,
  linkify: true,
  highlight: (code, lang) => {
    if (lang && hljs.getLanguage(lang)) {
      try {
        return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
      } catch { /* plain */ }
    }
    return '';
  },
});
// label: each checkbox inside a <label> with its item's text (its name
// for a screen reader); enabled false: the answer is read-only.
md.use(taskLists, { enabled: false, label: true });
const fence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const lang = tokens[idx].info.trim().split(/\s+/)[0] ?? '';
  return `<div class="code"><div class="code-bar"><span class="lang">${md.utils.escapeHtml(lang)}</span>` +
    `<button class="link" data-act="copy" title="Copy the code">Copy</button>` +
    `<button class="link" data-act="insert" title="Insert at the cursor of the active editor">Insert</button></div>` +
    fence(tokens, idx, options, env, self) + '</div>';
};

/** The HTML of a markdown text. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/**
 * Sets body to the markdown of text, changing only what differs: while
 * an answer streams, the settled blocks keep their nodes and the growing
 * text node grows, so the aria-live log announces the new words only.
 */
export function updateMarkdown(body: HTMLElement, text: string): void {
  const next = body.cloneNode(false) as HTMLElement;
  next.innerHTML = renderMarkdown(text);
  morphdom(body, next, {
    onBeforeElUpdated: (from, to) => !from.isEqualNode(to),
  });
}
