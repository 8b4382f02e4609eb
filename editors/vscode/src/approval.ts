// The server's approval requests ("Loom (name) wants to run bash:\n<cmd>"),
// and what "Always allow" remembers for each kind: every command, or every
// tool of an MCP server, as the server's own approval rule (loom.addRule
// {every} / {mcpServer}, in the user's loom state, outside the
// repository). No vscode imports: tested under node.

/** What "Always allow" remembers for an approval. */
export type AlwaysRule =
  /** Every command in this folder (loom.addRule {every}). */
  | { kind: 'bash' }
  /** Every tool of that MCP server in this folder (loom.addRule {mcpServer}). */
  | { kind: 'mcp'; server: string }
  /** Every page from that host in this folder (loom.addRule {fetchHost}). */
  | { kind: 'fetch'; host: string };

/** An approval request, parsed from window/showMessageRequest. */
export interface ApprovalRequest {
  /** The workspace folder's name, as the server said it. */
  folderName: string;
  /** The tool: bash, an MCP tool ("server__tool"), "git hooks", … */
  tool: string;
  /** What would run: the command, or the MCP server, tool and arguments. */
  detail: string;
  /** What "Always allow in this workspace" means here; none for a one-off (git hooks). */
  always?: AlwaysRule;
}

/** The title of the server's own "Always allow" action (an MCP tool, this session). */
export const serverAlwaysTitle = 'Always allow';

/**
 * A rule the server offers with an approval (an action item's rule, as
 * loom-lsp's cmdrules.Rule): this exact command, or commands starting with
 * these words.
 */
export type RuleOffer = { exact?: string; prefix?: string };

/** An action item of window/showMessageRequest, as loom-lsp sends it. */
export interface ActionItem { title: string; rule?: RuleOffer }

/** The rule offers among the actions: the exact command and the prefix, each at most once. */
export function ruleOffers(actions: readonly ActionItem[]): { exact?: ActionItem; prefix?: ActionItem } {
  const out: { exact?: ActionItem; prefix?: ActionItem } = {};
  for (const a of actions) {
    if (typeof a.rule?.exact === 'string' && a.rule.exact !== '' && !out.exact) {
      out.exact = a;
    } else if (typeof a.rule?.prefix === 'string' && a.rule.prefix !== '' && !out.prefix) {
      out.prefix = a;
    }
  }
  return out;
}

/**
 * The answer to send for a rule choice: the server's own action item,
 * with the prefix the user edited (trimmed; the server re-parses it).
 */
export function ruleAnswer(offer: ActionItem, prefix?: string): ActionItem {
  if (offer.rule?.prefix !== undefined && prefix !== undefined && prefix.trim() !== '') {
    return { ...offer, rule: { prefix: prefix.trim().replace(/\s+/g, ' ') } };
  }
  return offer;
}

/** Parses an approval request; undefined for any other message. */
export function parseApproval(message: string): ApprovalRequest | undefined {
  const m = /^Loom \(([^)]*)\) wants to run ([^:\n]+):\n?([\s\S]*)$/.exec(message);
  if (!m) {
    return undefined;
  }
  const [, folderName, tool, detail] = m;
  const req: ApprovalRequest = { folderName, tool, detail };
  if (tool === 'bash') {
    req.always = { kind: 'bash' };
  } else if (tool === 'fetch') {
    const host = urlHost(detail);
    if (host) {
      req.always = { kind: 'fetch', host };
    }
  } else {
    const mcp = /^MCP server ([A-Za-z0-9_-]+), tool /.exec(detail);
    if (mcp && tool.startsWith(mcp[1] + '__')) {
      req.always = { kind: 'mcp', server: mcp[1] };
    }
  }
  return req;
}

/** The host of a fetch's URL, as the server keeps it (lower case, no port, no brackets); undefined for a URL that does not parse. */
export function urlHost(url: string): string | undefined {
  try {
    const host = new URL(url.trim()).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    return host !== '' ? host : undefined;
  } catch {
    return undefined;
  }
}

/** The setting a rule writes, in words (the button's tooltip, the notice). */
export function alwaysWords(rule: AlwaysRule): string {
  switch (rule.kind) {
    case 'bash':
      return 'Every command the agent asks to run in this folder runs without asking (your own rule, kept outside the repository; loom.removeRule {every} takes it back)';
    case 'mcp':
      return `Every tool of MCP server ${rule.server} runs without asking in this folder (your own rule, kept outside the repository; "Loom: Approval Rules…" takes it back)`;
    case 'fetch':
      return `Pages from ${rule.host} are fetched without asking in this folder (your own rule, kept outside the repository; "Loom: Approval Rules…" takes it back)`;
  }
}

/** What the answered card says an "Always allow" allowed. */
export function alwaysAnswered(rule: AlwaysRule): string {
  switch (rule.kind) {
    case 'bash':
      return 'every command, in this folder';
    case 'mcp':
      return `every tool of ${rule.server}, in this folder`;
    case 'fetch':
      return `fetches from ${rule.host}, in this folder`;
  }
}

/** loom.addRule's rule for an "Always allow": {every}, {mcpServer} or {fetchHost}. */
export function alwaysRuleArgs(rule: AlwaysRule): { every: true } | { mcpServer: string } | { fetchHost: string } {
  switch (rule.kind) {
    case 'bash':
      return { every: true };
    case 'mcp':
      return { mcpServer: rule.server };
    case 'fetch':
      return { fetchHost: rule.host };
  }
}

/**
 * The action to answer the server with: Allow or Deny, and for "always"
 * the server's own "Always allow" when it offered one (so that the calls
 * already waiting behind this one are spared too).
 */
export function answerTitle(answer: 'allow' | 'deny' | 'always', offered: readonly string[]): string {
  if (answer === 'deny') {
    return 'Deny';
  }
  return answer === 'always' && offered.includes(serverAlwaysTitle) ? serverAlwaysTitle : 'Allow';
}

/** An approval rule as loom.rules and loom.status list it. */
export type SavedRule = { exact?: string; prefix?: string; every?: boolean; mcpServer?: string; fetchHost?: string };

/** A saved rule in words: every command, `npm test`, commands starting with `go test`, every tool of MCP server files. */
export function ruleWords(r: SavedRule): string {
  if (r.mcpServer) {
    return `every tool of MCP server ${r.mcpServer}`;
  }
  if (r.fetchHost) {
    return `fetches from ${r.fetchHost}`;
  }
  return r.every ? 'every command' : r.exact ? `\`${r.exact}\`` : `commands starting with \`${r.prefix ?? ''}\``;
}

/**
 * A folder's rules as one list (loom.rules and loom.status keep the MCP
 * servers and fetch hosts apart, as allowMcpServers and allowFetchHosts): each an argument loom.removeRule
 * takes back.
 */
export function savedRules(res: { allowCommands?: SavedRule[]; allowMcpServers?: string[]; allowFetchHosts?: string[] } | null | undefined): SavedRule[] {
  return [...(res?.allowCommands ?? []), ...(res?.allowMcpServers ?? []).map((mcpServer) => ({ mcpServer })),
    ...(res?.allowFetchHosts ?? []).map((fetchHost) => ({ fetchHost }))];
}
