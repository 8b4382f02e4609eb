import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { reviewEditsValue, toServerConfig, trustLayer } from '../settings';
import { answerConfiguration } from '../trust';
import { LoomFeature } from '../feature';
import { isBusy, stateWords } from '../status';

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

test('the workspace trust goes with the settings, as the agreed trust.workspace key', () => {
  assert.deepEqual(toServerConfig({ tools: { bash: 'ask' } }, true), { tools: { bash: 'ask' }, trust: { workspace: true } });
  assert.deepEqual(toServerConfig({}, false), { trust: { workspace: false } });
  assert.deepEqual(trustLayer(false), { trust: { workspace: false } });
});

test('LoomFeature declares experimental.loom and keeps other experimental keys', () => {
  const caps: { experimental?: unknown } = { experimental: { other: 1 } };
  new LoomFeature().fillClientCapabilities(caps as never);
  assert.deepEqual(caps.experimental, {
    other: 1,
    loom: {
      saveDocuments: true, thoughts: true, review: true, workspaceTrust: true, userSettings: true, diagnostics: true, elicit: true,
      trustCommand: '"Loom: Trust this Folder" from the Command Palette',
    },
  });
});

test('LoomFeature takes the loom.* commands out of automatic registration', () => {
  const caps = { executeCommandProvider: { commands: ['loom.ask', 'loom.cancel', 'loom.reset', 'loom.status', 'loom.history', 'loom.undo', 'loom.redo', 'loom.newConversation', 'other.command'] } };
  const f = new LoomFeature();
  f.preInitialize(caps as never);
  assert.deepEqual(caps.executeCommandProvider.commands, ['other.command']);
  // What the server can do is still known (the model picker asks loom.models only when listed).
  assert.ok(f.serverCommands.has('loom.redo') && f.serverCommands.has('other.command') && !f.serverCommands.has('loom.models'));
  assert.ok(f.serverCommands.has('loom.newConversation'));
});

test('states in plain words', () => {
  assert.equal(stateWords('WaitingForUserInput'), 'idle');
  assert.equal(stateWords('CallingLlm'), 'thinking');
  assert.equal(stateWords('ExecutingTools', 'bash'), 'running bash');
  assert.equal(stateWords('ExecutingTools'), 'running tools');
  assert.equal(stateWords('ExecutingTools', 'bash', true), 'waiting for approval');
  assert.equal(stateWords('SomeNewState'), 'some new state');
  assert.equal(isBusy('ExecutingTools'), true);
  assert.equal(isBusy('WaitingForUserInput'), false);
});

test('workspace/configuration: the loom section is loom-lsp\'s keys without trust, other sections VS Code\'s', () => {
  const loom = () => toServerConfig({ tools: { bash: 'deny' } });
  assert.deepEqual(answerConfiguration([{ section: 'gopls' }, { section: 'loom' }, {}], [{ staticcheck: true }, { path: 'x' }, null], loom),
    [{ staticcheck: true }, { tools: { bash: 'deny' } }, null]);
});

test('workspace/configuration: asked for loom.user too, the user\'s settings go there and the loom section keeps the workspace\'s alone', () => {
  const byScope = {
    all: { model: { name: 'mine' }, tools: { bash: 'allow' } },
    user: { model: { name: 'mine' } },
    workspace: { tools: { bash: 'allow' } },
  };
  const loom = (scope: 'all' | 'user' | 'workspace') => byScope[scope];
  assert.deepEqual(answerConfiguration([{ section: 'loom' }, { section: 'loom.user' }], [{ repo: 'filled' }, { repo: 'filled' }], loom),
    [byScope.workspace, byScope.user]);
  // An older loom-lsp asks for loom alone: everything, as before.
  assert.deepEqual(answerConfiguration([{ section: 'loom' }], [null], loom), [byScope.all]);
});

test('the review toggle: on writes review; off removes the workspace value (never a widening "auto"), unless the user\'s own settings say review', () => {
  assert.equal(reviewEditsValue(true, undefined), 'review');
  assert.equal(reviewEditsValue(true, 'auto'), 'review');
  assert.equal(reviewEditsValue(false, undefined), undefined);
  assert.equal(reviewEditsValue(false, 'auto'), undefined);
  assert.equal(reviewEditsValue(false, 'review'), 'auto');
});
