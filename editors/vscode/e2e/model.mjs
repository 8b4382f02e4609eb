// A scripted OpenAI-compatible model on loopback: POST /v1/chat/completions
// answers with Chat Completions SSE (`data: {...}` chunks whose
// choices[0].delta carries content or tool_calls, then `data: [DONE]`).
// What it answers depends on the last message: a rule whose `when`
// matches the last user prompt (or, after a tool result, `after` matches
// the tool's output). Every request is kept for the test to inspect.
import http from 'node:http';

/**
 * @typedef {{ reasoning?: string[], text?: string[], delayMs?: number, tool?: { name: string, args: object }, tools?: { name: string, args: object }[],
 *   usage?: object, gate?: () => Promise<void>,
 *   holdAfter?: number, hold?: () => Promise<void> }} Reply
 *   holdAfter/hold: after holdAfter pieces of text, the stream waits for hold() (a gate the test opens).
 * @typedef {{ when: RegExp, reply?: Reply, afterTool?: Reply, replies?: Reply[] }} Rule
 */

/** Starts the model with rules; resolves { url, requests, close, port }. */
export async function startModel(rules, port = 0) {
  const requests = [];
  const sockets = new Set();
  let callSeq = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted-coder', object: 'model' }, { id: 'scripted-mini', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      let parsed;
      try {
        parsed = JSON.parse(body);
      } catch {
        res.writeHead(400).end('bad json');
        return;
      }
      requests.push(parsed);
      // What loom adds to the conversation on its own ("[loom] changed on
      // disk since you read them: ...", placed after a tool's result) is
      // not the user's prompt: a model answers the prompt, or the tool's
      // result, with the note in mind. (A note a rule asks for, such as the
      // compaction's prompt, stays.)
      const isNote = (m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[loom] ') &&
        !rules.some((r) => r.when.test(m.content));
      const msgs = (parsed.messages ?? []).filter((m) => !isNote(m));
      const last = msgs[msgs.length - 1] ?? {};
      const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
      const prompt = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content ?? '');
      const rule = rules.find((r) => r.when.test(prompt));
      let reply = { text: [`(no scripted answer for: ${prompt.slice(0, 60)})`] };
      if (rule?.replies) {
        // One reply per round: the number of tool results since the prompt.
        const since = msgs.slice(msgs.lastIndexOf(lastUser) + 1).filter((m) => m.role === 'tool').length;
        reply = rule.replies[Math.min(since, rule.replies.length - 1)];
      } else if (rule) {
        reply = last.role === 'tool' ? (rule.afterTool ?? { text: ['Done.'] }) : rule.reply;
        if (typeof reply === 'function') {
          reply = reply(last.content ?? '');
        }
      }
      if (reply.gate) {
        // The test holds this answer until it is ready for what follows.
        await reply.gate();
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const base = { id: 'chatcmpl-' + requests.length, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'scripted-coder' };
      const send = (delta, finish = null, extra = {}) => {
        if (!res.writableEnded && !res.destroyed) {
          res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
        }
      };
      let closed = false;
      res.on('close', () => { closed = true; });
      send({ role: 'assistant', content: '' });
      for (const piece of reply.reasoning ?? []) { // as vLLM / llama.cpp / DeepSeek stream thinking
        send({ reasoning_content: piece });
      }
      for (const [i, piece] of (reply.text ?? []).entries()) {
        if (closed) {
          return;
        }
        if (reply.hold && i === reply.holdAfter) {
          await reply.hold();
          if (closed) {
            return;
          }
        }
        send({ content: piece });
        if (reply.delayMs) {
          await new Promise((r) => setTimeout(r, reply.delayMs));
        }
      }
      const calls = reply.tools ?? (reply.tool ? [reply.tool] : []);
      if (calls.length) {
        // tools: several calls in one response (as a model editing several files at once).
        calls.forEach((c, index) => {
          const id = `call_${++callSeq}`;
          send({ tool_calls: [{ index, id, type: 'function', function: { name: c.name, arguments: '' } }] });
          send({ tool_calls: [{ index, function: { arguments: JSON.stringify(c.args) } }] });
        });
        send({}, 'tool_calls');
      } else {
        send({}, 'stop');
      }
      const u = reply.usage ?? { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
      if (!closed) {
        res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: u })}\n\n`);
        res.write('data: [DONE]\n\n');
        res.end();
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const actual = server.address().port;
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}/v1`,
    requests,
    /** Stops listening and drops every connection: the model is down. */
    close: () => new Promise((r) => {
      for (const s of sockets) {
        s.destroy();
      }
      server.close(() => r());
    }),
  };
}
