// The "loom" settings section -> loom.toml keys (snake_case), sent as
// initializationOptions and workspace/didChangeConfiguration. No vscode
// imports: tested under node.

/** The settings this extension reads (loom.path is the client's own). */
export interface LoomSettings {
  model?: { provider?: string; baseUrl?: string; name?: string; apiKeyEnv?: string };
  tools?: { bash?: string };
}

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
export function toServerConfig(s: LoomSettings | undefined): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
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
  const bash = s?.tools?.bash;
  if (typeof bash === 'string' && bash !== '') {
    out.tools = { bash };
  }
  return out;
}
