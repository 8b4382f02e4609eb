// A scripted fill-in-the-middle model on loopback, speaking llama.cpp's
// POST /infill (its server README: input_prefix, prompt = the cursor's
// line, input_suffix → {"content": …}). answer(body) gives the text to
// insert; every request body is kept for the test to inspect.
import http from 'node:http';

/** Starts the model; resolves { url, requests, close }. */
export async function startFim(answer) {
  const requests = [];
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/infill') {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let parsed;
      try {
        parsed = JSON.parse(body);
      } catch {
        res.writeHead(400).end('bad json');
        return;
      }
      requests.push(parsed);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ content: answer(parsed), stop: true, tokens_predicted: 3 }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((r) => {
      server.closeAllConnections?.();
      server.close(() => r());
    }),
  };
}
