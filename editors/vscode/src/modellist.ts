// The models a model server lists, for the first-run setup card: the
// OpenAI-compatible GET {base}/models ({data: [{id}]}), or Ollama's
// /api/tags ({models: [{name}]}). The API key (read from the named
// environment variable) goes in the Authorization header only; it is
// never shown or logged. No vscode imports: tested under node.

/** Lists the models at baseUrl; rejects with a short reason. */
export async function listModels(baseUrl: string, apiKey: string | undefined, timeoutMs = 5000): Promise<string[]> {
  const base = baseUrl.trim().replace(/\/+$/, '');
  if (!/^https?:\/\//.test(base)) {
    throw new Error('the base URL must start with http:// or https://');
  }
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const get = async (url: string): Promise<unknown> => {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      throw new Error(`HTTP ${res.status} from ${url}`);
    }
    return res.json();
  };
  try {
    return modelIds(await get(base + '/models'));
  } catch (e) {
    // Ollama's own list, at the server's root.
    const root = base.replace(/\/v1$/, '');
    if (root !== base) {
      try {
        return modelIds(await get(root + '/api/tags'));
      } catch { /* the first reason is the better one */ }
    }
    throw new Error(e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e));
  }
}

/** The model names of a /models or /api/tags reply, sorted. */
export function modelIds(body: unknown): string[] {
  const b = body as { data?: { id?: unknown }[]; models?: { name?: unknown; model?: unknown }[] };
  const ids = new Set<string>();
  for (const m of b?.data ?? []) {
    if (typeof m?.id === 'string') {
      ids.add(m.id);
    }
  }
  for (const m of b?.models ?? []) {
    const id = typeof m?.name === 'string' ? m.name : typeof m?.model === 'string' ? m.model : undefined;
    if (id) {
      ids.add(id);
    }
  }
  if (ids.size === 0) {
    throw new Error('the server listed no models');
  }
  return [...ids].sort();
}
