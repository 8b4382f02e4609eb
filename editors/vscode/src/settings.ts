// The "loom" settings section -> loom.toml keys (snake_case), sent with
// workspace/didChangeConfiguration, and the editor's word on the
// workspace's trust, sent there and in initializationOptions. No vscode
// imports: tested under node.

/** The settings this extension reads (loom.path is the client's own). */
export interface LoomSettings {
  model?: { provider?: string; baseUrl?: string; name?: string; apiKeyEnv?: string };
  tools?: { bash?: string; edits?: string };
  /** loom.mcp.approve: an MCP server's name -> allow, ask or deny. */
  mcp?: { approve?: Record<string, unknown> };
  /** loom.completion.*: the inline completion model ([completion]). */
  completion?: { api?: string; baseUrl?: string; model?: string; apiKeyEnv?: string };
}

const completionKeys: Record<string, string> = {
  api: 'api',
  baseUrl: 'base_url',
  model: 'model',
  apiKeyEnv: 'api_key_env',
};

const policies: readonly string[] = ['allow', 'ask', 'deny'];

const modelKeys: Record<string, string> = {
  provider: 'provider',
  baseUrl: 'base_url',
  name: 'name',
  apiKeyEnv: 'api_key_env',
};

/**
 * Converts settings to the server's override object. Empty values are
 * left out, so loom.toml keeps its say; unknown keys are dropped rather
 * than sent (the server rejects unknown keys).
 */
export function toServerConfig(s: LoomSettings | undefined, trusted?: boolean): Record<string, object> {
  const out: Record<string, object> = {};
  const model: Record<string, string> = {};
  for (const [k, v] of Object.entries(s?.model ?? {})) {
    const key = modelKeys[k];
    if (key && typeof v === 'string' && v.trim() !== '') {
      model[key] = v.trim();
    }
  }
  if (Object.keys(model).length > 0) {
    out.model = model;
  }
  const completion: Record<string, string> = {};
  for (const [k, v] of Object.entries(s?.completion ?? {})) {
    const key = completionKeys[k];
    if (key && typeof v === 'string' && v.trim() !== '') {
      completion[key] = v.trim();
    }
  }
  if (Object.keys(completion).length > 0) {
    out.completion = completion;
  }
  const tools: Record<string, string> = {};
  const bash = s?.tools?.bash;
  if (typeof bash === 'string' && bash !== '') {
    tools.bash = bash;
  }
  const edits = s?.tools?.edits;
  if (edits === 'auto' || edits === 'review') {
    tools.edits = edits;
  }
  if (Object.keys(tools).length > 0) {
    out.tools = tools;
  }
  const servers: Record<string, { approve: string }> = {};
  for (const [name, policy] of Object.entries(s?.mcp?.approve ?? {})) {
    // The server's rules for a name: up to 32 letters, digits, - or _, no "__".
    if (/^[A-Za-z0-9_-]{1,32}$/.test(name) && !name.includes('__') && typeof policy === 'string' && policies.includes(policy)) {
      servers[name] = { approve: policy };
    }
  }
  if (Object.keys(servers).length > 0) {
    out.mcp = { servers };
  }
  if (trusted !== undefined) {
    out.trust = trustLayer(trusted).trust;
  }
  return out;
}

/**
 * The editor's word on the workspace's trust (the agreed key; VS Code's
 * vscode.workspace.isTrusted): the server honours the restricted keys of
 * the folder's own .loom.toml (model server, tools.bash = "allow", hooks,
 * MCP servers) only when it is true.
 */
export function trustLayer(trusted: boolean): { trust: { workspace: boolean } } {
  return { trust: { workspace: trusted } };
}

/**
 * What the panel's "Review edits" toggle writes to the workspace's
 * loom.tools.edits (undefined: remove the value). On is "review", which
 * only narrows. Off removes the workspace value rather than writing
 * "auto": "auto" is a widening value, bound with the folder's other
 * widening values to its trust, so writing it would make loom-lsp hold
 * all of them back as changed since the folder was trusted. Only when
 * the user's own settings say "review" does off write "auto" (in a
 * trusted folder, it then asks to be trusted again, as it should).
 */
export function reviewEditsValue(on: boolean, userValue: string | undefined): 'review' | 'auto' | undefined {
  if (on) {
    return 'review';
  }
  return userValue === 'review' ? 'auto' : undefined;
}
