import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { toServerConfig } from '../settings';
import { LoomFeature } from '../feature';
import { isBusy, stateLabel } from '../protocol';

test('settings become snake_case loom.toml keys, empty ones left out', () => {
  assert.deepEqual(toServerConfig({
    model: { provider: 'openai', baseUrl: ' http://localhost:11434/v1 ', name: '', apiKeyEnv: 'OPENAI_API_KEY' },
    tools: { bash: 'ask' },
  }), {
    model: { provider: 'openai', base_url: 'http://localhost:11434/v1', api_key_env: 'OPENAI_API_KEY' },
    tools: { bash: 'ask' },
  });
  assert.deepEqual(toServerConfig({ model: { name: '' }, tools: { bash: '' } }), {});
  assert.deepEqual(toServerConfig(undefined), {});
});

test('LoomFeature declares experimental.loom and keeps other experimental keys', () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  new LoomFeature().fillClientCapabilities(caps as never);
  assert.deepEqual(caps.experimental, { other: 1, loom: { saveDocuments: true } });
});

test('LoomFeature takes the loom.* commands out of automatic registration', () => {
  const caps = { executeCommandProvider: { commands: ['loom.ask', 'loom.cancel', 'loom.reset', 'loom.status', 'loom.history', 'loom.undo', 'loom.other'] } };
  new LoomFeature().preInitialize(caps as never);
  assert.deepEqual(caps.executeCommandProvider.commands, ['loom.other']);
});

test('state labels', () => {
  assert.equal(stateLabel('WaitingForUserInput'), 'idle');
  assert.equal(stateLabel('CallingLlm'), 'thinking');
  assert.equal(stateLabel('Whatever'), 'Whatever');
  assert.equal(isBusy('ExecutingTools'), true);
  assert.equal(isBusy('WaitingForUserInput'), false);
});
