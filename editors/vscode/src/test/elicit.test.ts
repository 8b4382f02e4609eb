import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { elicit, ElicitUI, fillIn, decline, openPage } from '../elicit';
import type { ElicitParams } from '../wire.gen';

const form: ElicitParams = {
  folder: '/w', conversation: 'c', turn: 1, tool: 'asking__deploy', callId: 'k', server: 'asking', mode: 'form',
  message: 'Deploy where, and with which token?',
  fields: [
    { name: 'env', title: 'Environment', type: 'string', enum: ['prod', 'staging'], enumTitles: ['Production', 'Staging'], required: true },
    { name: 'api_token', title: 'API token', type: 'string', required: true, secret: true },
    { name: 'notify', title: 'Notify the team', type: 'boolean', hasDefault: true, default: 'true' },
    { name: 'replicas', type: 'integer', hasDefault: true, default: '2', description: 'How many' },
  ],
};

interface Seen { messages: string[]; inputs: Array<{ title: string; value: string; password: boolean; prompt: string }>; picks: Array<{ title: string; labels: string[]; picked: string[] }>; opened: string[] }

function stub(button: string | undefined, answers: Array<string | string[] | undefined>): { ui: ElicitUI; seen: Seen } {
  const seen: Seen = { messages: [], inputs: [], picks: [], opened: [] };
  const next = () => answers.shift();
  const ui: ElicitUI = {
    message: async (text, detail) => { seen.messages.push(`${text}\n${detail}`); return button; },
    input: async (o) => { seen.inputs.push({ title: o.title, value: o.value, password: o.password, prompt: o.prompt }); return next() as string | undefined; },
    pick: async (items, o) => {
      seen.picks.push({ title: o.title, labels: items.map((i) => i.label), picked: items.filter((i) => i.picked).map((i) => i.value) });
      const a = next();
      return a === undefined ? undefined : Array.isArray(a) ? a : [a];
    },
    openExternal: async (u) => { seen.opened.push(u); },
  };
  return { ui, seen };
}

test('a form: one input per field, the secret in a password box, choices picked; the values go back', async () => {
  const { ui, seen } = stub(fillIn, ['prod', 's3cret-token', 'false', '']);
  const got = await elicit(form, ui);
  assert.deepEqual(got, { action: 'accept', values: { env: 'prod', api_token: 's3cret-token', notify: 'false', replicas: '' } });
  assert.match(seen.messages[0], /MCP server asking asks: Deploy where, and with which token\?\nEnvironment \(required\), API token \(required\)/);
  assert.deepEqual(seen.picks[0], { title: 'asking: Environment (1/4)', labels: ['Production', 'Staging'], picked: [] });
  assert.deepEqual(seen.inputs[0], { title: 'asking: API token (2/4)', value: '', password: true, prompt: 'required' });
  assert.deepEqual(seen.picks[1].picked, ['true'], 'the default is picked');
  assert.deepEqual(seen.inputs[1], { title: 'asking: replicas (4/4)', value: '2', password: false, prompt: 'How many · default: 2' });
});

test('asked again: the problems are shown and the values typed come back, the secret is typed again', async () => {
  const { ui, seen } = stub(fillIn, ['staging', 'longer-token', 'true', '3']);
  await elicit({ ...form, problems: ['API token: at least 8 characters, got 5'], values: { env: 'staging', replicas: '3' } }, ui);
  assert.match(seen.messages[0], /Not sent, please correct:\nAPI token: at least 8 characters, got 5/);
  assert.deepEqual(seen.picks[0].picked, ['staging']);
  assert.equal(seen.inputs[0].value, '', 'no secret is filled in');
  assert.equal(seen.inputs[1].value, '3');
});

test('decline, dismiss, and a field left with Escape', async () => {
  assert.deepEqual(await elicit(form, stub(decline, []).ui), { action: 'decline' });
  assert.deepEqual(await elicit(form, stub(undefined, []).ui), { action: 'cancel' });
  assert.deepEqual(await elicit(form, stub(fillIn, ['prod', undefined]).ui), { action: 'cancel' });
});

test('a URL is shown, and opened only when the user asks', async () => {
  const url: ElicitParams = { ...form, mode: 'url', fields: undefined, message: 'Connect your account', url: 'https://example.com/connect?id=e1' };
  const a = stub(openPage, []);
  assert.deepEqual(await elicit(url, a.ui), { action: 'accept' });
  assert.deepEqual(a.seen.opened, ['https://example.com/connect?id=e1']);
  assert.match(a.seen.messages[0], /does not open it by itself\):\nhttps:\/\/example.com\/connect\?id=e1/);
  const d = stub(decline, []);
  assert.deepEqual(await elicit(url, d.ui), { action: 'decline' });
  assert.deepEqual(d.seen.opened, []);
});
