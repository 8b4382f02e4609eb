// A scripted OpenAI-compatible model server on loopback: it speaks the
// real Chat Completions streaming wire format (server-sent events), records
// every request body, and answers each one with what the test's `respond`
// function returns for it.
import http from "node:http";

/**
 * @typedef {{reasoning?: string[], text?: string[], toolCalls?: {id: string, name: string, arguments: string}[], usage?: object, paceMs?: number}} Reply
 * reasoning streams first, as delta.reasoning_content; usage, when set, is
 * sent in a last chunk with no choices, as OpenAI does.
 */

export class ScriptedModel {
  constructor() {
    /** @type {any[]} request bodies, in order */
    this.requests = [];
    /** @type {(body: any) => Reply} */
    this.respond = () => ({ text: ["(no script)"] });
    this.server = http.createServer((req, res) => this.#handle(req, res));
  }

  /** Starts listening on 127.0.0.1 and returns the API root URL. */
  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${this.server.address().port}/v1`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The messages of the last request. */
  lastMessages() {
    return this.requests.at(-1)?.messages ?? [];
  }

  #handle(req, res) {
    if (req.method === "GET" && req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: ["scripted", "scripted-large"].map((id) => ({ id, object: "model", created: 0, owned_by: "test" })) }));
      return;
    }
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw);
      this.requests.push(body);
      this.#stream(res, this.respond(body));
    });
  }

  #stream(res, reply) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const base = { id: "chatcmpl-test", object: "chat.completion.chunk", created: 0, model: "scripted" };
    const chunks = [];
    chunks.push({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    for (const t of reply.reasoning ?? []) {
      chunks.push({ ...base, choices: [{ index: 0, delta: { reasoning_content: t }, finish_reason: null }] });
    }
    for (const t of reply.text ?? []) {
      chunks.push({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
    }
    (reply.toolCalls ?? []).forEach((c, i) => {
      chunks.push({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }] }, finish_reason: null }],
      });
    });
    const finish = reply.toolCalls?.length ? "tool_calls" : "stop";
    chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (reply.usage) chunks.push({ ...base, choices: [], usage: reply.usage });
    let closed = false;
    res.on("close", () => (closed = true));
    const pace = reply.paceMs ?? 0;
    const send = (i) => {
      if (closed) return;
      if (i === chunks.length) {
        res.end("data: [DONE]\n\n");
        return;
      }
      res.write(`data: ${JSON.stringify(chunks[i])}\n\n`);
      if (pace > 0) setTimeout(() => send(i + 1), pace);
      else send(i + 1);
    };
    send(0);
  }
}
