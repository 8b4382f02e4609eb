import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { alwaysRuleArgs, alwaysWords, answerTitle, parseApproval, ruleWords, savedRules } from '../approval';
import { toServerConfig } from '../settings';

test('a bash approval: "always" means the every-command rule, outside the repository', () => {
  const r = parseApproval('Loom (greeting) wants to run bash:\nnpm test');
  assert.deepEqual(r, { folderName: 'greeting', tool: 'bash', detail: 'npm test', always: { kind: 'bash' } });
  assert.match(alwaysWords(r!.always!), /every command .* without asking .*outside the repository/i);
});

test('an MCP approval: "always" means the user\'s rule for its server (loom.addRule {mcpServer}), not a workspace setting', () => {
  const r = parseApproval('Loom (greeting) wants to run files__read:\nMCP server files, tool read, arguments: {"path":"a"}');
  assert.equal(r?.tool, 'files__read');
  assert.deepEqual(r?.always, { kind: 'mcp', server: 'files' });
  assert.match(alwaysWords(r!.always!), /every tool of MCP server files .*without asking .*outside the repository/i);
  assert.doesNotMatch(alwaysWords(r!.always!), /loom\.mcp\.approve|settings/);
  assert.deepEqual(alwaysRuleArgs(r!.always!), { mcpServer: 'files' });
  assert.deepEqual(alwaysRuleArgs({ kind: 'bash' }), { every: true });
  // A detail naming another server than the tool's is not trusted to say which.
  assert.equal(parseApproval('Loom (g) wants to run a__x:\nMCP server b, tool x, arguments: {}')?.always, undefined);
});

test('git hooks are asked once: no "always"', () => {
  const r = parseApproval('Loom (greeting) wants to run git hooks:\ncommit the agent\'s change, running your git hooks');
  assert.equal(r?.tool, 'git hooks');
  assert.equal(r?.always, undefined);
  assert.equal(parseApproval('Loom (greeting): rate limited'), undefined);
});

test('the answer: the server\'s own "Always allow" when offered, else Allow', () => {
  assert.equal(answerTitle('always', ['Allow', 'Deny', 'Always allow']), 'Always allow');
  assert.equal(answerTitle('always', ['Allow', 'Deny']), 'Allow');
  assert.equal(answerTitle('allow', ['Allow', 'Deny', 'Always allow']), 'Allow');
  assert.equal(answerTitle('deny', ['Allow', 'Deny', 'Always allow']), 'Deny');
});

test('loom.mcp.approve becomes mcp.servers.NAME.approve; bad names and policies are dropped', () => {
  assert.deepEqual(toServerConfig({ mcp: { approve: { files: 'allow', 'a__b': 'allow', web: 'sometimes', 'bad name': 'deny', git: 'deny' } } }),
    { mcp: { servers: { files: { approve: 'allow' }, git: { approve: 'deny' } } } });
  assert.deepEqual(toServerConfig({ mcp: { approve: {} } }), {});
});

test('loom.rules / loom.status: command rules and MCP servers as one list, each removable, in words', () => {
  const rules = savedRules({ allowCommands: [{ exact: 'npm test' }, { every: true }], allowMcpServers: ['files'] });
  assert.deepEqual(rules, [{ exact: 'npm test' }, { every: true }, { mcpServer: 'files' }]);
  assert.deepEqual(rules.map(ruleWords), ['`npm test`', 'every command', 'every tool of MCP server files']);
  assert.deepEqual(savedRules({ allowCommands: [{ prefix: 'go test' }] }), [{ prefix: 'go test' }]);
  assert.deepEqual(savedRules(null), []);
});

test('a fetch approval: "always" means the user\'s rule for the URL\'s host (loom.addRule {fetchHost}), listed and removable', () => {
  const r = parseApproval('Loom (greeting) wants to run fetch:\nhttps://Docs.Example.COM:8443/changelog?x=1');
  assert.deepEqual(r?.always, { kind: 'fetch', host: 'docs.example.com' });
  assert.match(alwaysWords(r!.always!), /Pages from docs\.example\.com are fetched without asking in this folder .*outside the repository/);
  assert.deepEqual(alwaysRuleArgs(r!.always!), { fetchHost: 'docs.example.com' });
  assert.deepEqual(parseApproval('Loom (g) wants to run fetch:\nhttp://[::1]:8080/x')?.always, { kind: 'fetch', host: '::1' });
  // A detail that is not a URL offers no "always".
  assert.equal(parseApproval('Loom (g) wants to run fetch:\nnot a url')?.always, undefined);
  const rules = savedRules({ allowCommands: [], allowFetchHosts: ['example.org'] });
  assert.deepEqual(rules, [{ fetchHost: 'example.org' }]);
  assert.deepEqual(rules.map(ruleWords), ['fetches from example.org']);
});
