import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ruleAnswer, ruleOffers } from '../approval';
import { listModels, modelIds } from '../modellist';
import { completeSlash, parseSlash } from '../slash';

test('slash commands complete and parse; a path is not a command', () => {
  assert.deepEqual(completeSlash('/').map((c) => c.name), ['new', 'compact', 'undo', 'rewind', 'model', 'status']);
  assert.deepEqual(completeSlash('/co').map((c) => c.name), ['compact']);
  assert.deepEqual(completeSlash('/model x'), [], 'no completion once the arguments start');
  assert.deepEqual(parseSlash('/model  qwen2.5-coder '), { name: 'model', args: 'qwen2.5-coder' });
  assert.deepEqual(parseSlash('/new'), { name: 'new', args: '' });
  assert.equal(parseSlash('/usr/bin/env is broken'), undefined);
  assert.equal(parseSlash('what does /new do?'), undefined);
});

test('rule offers come from the server\'s action items; the prefix answer carries the edited prefix', () => {
  const actions = [
    { title: 'Allow' }, { title: 'Deny' },
    { title: 'Always allow `go test ./...`', rule: { exact: 'go test ./...' } },
    { title: 'Always allow commands starting with `go test`', rule: { prefix: 'go test' } },
  ];
  const o = ruleOffers(actions);
  assert.equal(o.exact?.rule?.exact, 'go test ./...');
  assert.deepEqual(ruleAnswer(o.prefix!, '  go   test ./pkg  '), { title: actions[3].title, rule: { prefix: 'go test ./pkg' } });
  assert.deepEqual(ruleAnswer(o.prefix!, ''), actions[3], 'an emptied field keeps the server\'s prefix');
  assert.deepEqual(ruleOffers([{ title: 'Allow' }, { title: 'Deny' }]), {});
});

test('the setup card lists an OpenAI-compatible server\'s models, and Ollama\'s tags', async () => {
  assert.deepEqual(modelIds({ data: [{ id: 'b' }, { id: 'a' }] }), ['a', 'b']);
  assert.deepEqual(modelIds({ models: [{ name: 'qwen2.5-coder:7b' }] }), ['qwen2.5-coder:7b']);
  assert.throws(() => modelIds({}), /no models/);
  let auth: string | undefined;
  const srv = http.createServer((req, res) => {
    auth = req.headers.authorization;
    if (req.url === '/v1/models') {
      res.writeHead(404).end();
    } else if (req.url === '/api/tags') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models: [{ name: 'llama3' }] }));
    } else {
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  try {
    assert.deepEqual(await listModels(`http://127.0.0.1:${port}/v1/`, 'sk-test'), ['llama3']);
    assert.equal(auth, 'Bearer sk-test');
    await assert.rejects(listModels('ftp://x', undefined), /http/);
  } finally {
    srv.close();
  }
});
