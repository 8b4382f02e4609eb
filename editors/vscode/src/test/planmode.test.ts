import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeImages } from '../imagefiles';
import { decisionState, decisionWords } from '../planmode';
import { applyPlanStatus } from '../planstatus';
import type { Status } from '../protocol';
import { imageLabel, maxImageBytes, refuseImage } from '../shared/images';
import { completeSlash, customCommands } from '../slash';
import { Transcript } from '../transcript';

function status(over: Partial<Status>): Status {
  return { folder: '/w', state: 'WaitingForUserInput', turn: 3, model: 'm', queued: [], messages: 0, ...over };
}

test('a proposed plan is a card until decided; the turn\'s end closes an undecided one', () => {
  const t = new Transcript('/w', 'w');
  const card = t.planProposal(2, 'call_1', '1. read\n2. write');
  assert.equal(card.kind, 'plan');
  assert.equal(t.planProposal(2, 'call_1', '1. read\n2. write').id, card.id, 'the same call reuses its card');
  t.setState('ExecutingTools', 2);
  assert.equal(t.header().state, 'waiting for your decision on the plan');
  const decided = t.planDecided(card.id, 'rejected', 'Keep planning: shorter');
  assert.deepEqual(decided && { state: (decided as { state: string }).state, answer: (decided as { answer?: string }).answer },
    { state: 'rejected', answer: 'Keep planning: shorter' });
  assert.equal(t.planDecided(card.id, 'accepted'), undefined, 'a decided card is not decided again');
  const second = t.planProposal(2, 'call_2', '1. write one line');
  const ended = t.turnEnded(2, 'done');
  assert.ok(ended.some((it) => it.id === second.id), 'the open card is redrawn');
  assert.equal((t.get(second.id) as { state: string }).state, 'closed');
  assert.equal((t.get(card.id) as { state: string }).state, 'rejected', 'a decided card keeps its decision');
});

test('loom.status gives the mode, the list, the commands and the plan that waits', () => {
  const t = new Transcript('/w', 'w');
  const stale = t.planProposal(1, 'call_old', 'old plan');
  const changed = applyPlanStatus(t, status({
    mode: 'plan', plan: [{ step: 'read', status: 'completed' }, { step: 'write', status: 'in_progress' }],
    planProposal: { callId: 'call_new', plan: '1. write' },
    commands: [{ name: 'greet', description: 'Greets', argumentHint: '[who]', scope: 'repository' }, { name: 'house-style', scope: 'user' }],
  }), true);
  const h = t.header();
  assert.equal(h.mode, 'plan');
  assert.equal(h.modes, true);
  assert.deepEqual(h.plan?.map((s) => s.status), ['completed', 'in_progress']);
  assert.deepEqual(h.commands, [
    { name: 'greet', args: '[who]', help: 'Greets', custom: true },
    { name: 'house-style', help: 'Your custom command', custom: true },
  ]);
  assert.equal((t.get(stale.id) as { state: string }).state, 'closed', 'the server no longer waits on it');
  const open = t.items.filter((it) => it.kind === 'plan' && it.state === 'open');
  assert.equal(open.length, 1);
  assert.ok(changed.some((it) => it.id === stale.id) && changed.some((it) => it.id === open[0].id));
  // Asked again: nothing new.
  assert.deepEqual(applyPlanStatus(t, status({ mode: 'plan', planProposal: { callId: 'call_new', plan: '1. write' } }), true), []);
  // The effort in force, chosen or configured, and the picker's list when the server sets one.
  applyPlanStatus(t, status({ effort: 'high', effortChosen: true }), true, true);
  assert.deepEqual([t.header().effort, t.header().effortChosen, t.header().efforts?.length], ['high', true, 7]);
  // An older server: agent, no list, no selector, no effort picker.
  applyPlanStatus(t, status({}), false);
  assert.deepEqual([t.header().effort, t.header().effortChosen, t.header().efforts], ['', false, []]);
  assert.equal(t.header().mode, 'agent');
  assert.equal(t.header().modes, false);
  assert.deepEqual(t.header().plan, []);
});

test('a decision in words and the state it leaves', () => {
  assert.equal(decisionWords({ accept: true }), 'Building it');
  assert.equal(decisionWords({ accept: true, fresh: true, plan: 'x' }), 'Building your edited version in a new conversation');
  assert.equal(decisionWords({ accept: false, comment: ' one line only ' }), 'Keep planning: one line only');
  assert.match(decisionWords({ accept: false }), /next prompt/);
  assert.equal(decisionState({ accept: true, fresh: true }), 'fresh');
  assert.equal(decisionState({ accept: false, fresh: true }), 'rejected');
});

test('the slash menu offers the folder\'s commands after the panel\'s own; the panel\'s win a name', () => {
  const custom = customCommands([{ name: 'greet', description: 'Greets' }, { name: 'frontend:component' }, { name: 'model', description: 'theirs' }, { name: '' }]);
  assert.deepEqual(completeSlash('/', custom).map((c) => c.name), ['new', 'compact', 'undo', 'rewind', 'model', 'status', 'greet', 'frontend:component']);
  assert.deepEqual(completeSlash('/gr', custom).map((c) => [c.name, c.custom]), [['greet', true]]);
  assert.deepEqual(completeSlash('/FRONT', custom).map((c) => c.name), ['frontend:component']);
  assert.equal(completeSlash('/model', custom).length, 1);
  assert.equal(completeSlash('/model', custom)[0].custom, undefined, 'the panel\'s /model');
  assert.deepEqual(customCommands(undefined), []);
});

test('pictures: the server\'s limits said at once', () => {
  assert.equal(refuseImage('a.png', 'image/png', 1000, 0), undefined);
  assert.match(refuseImage('a.bmp', 'image/bmp', 1000, 0) ?? '', /a\.bmp is not a picture.*PNG, JPEG, GIF or WebP/);
  assert.match(refuseImage('big.png', 'image/png', maxImageBytes + 1, 0) ?? '', /big\.png is 5\.0 MB, over the 5 MB limit/);
  assert.match(refuseImage('n.png', 'image/png', 10, 8) ?? '', /at most 8 pictures/);
  assert.equal(imageLabel({ name: 'shot.png', size: 2048 }), 'shot.png (2 KB)');
});

test('pictures are written for loom.ask outside the workspace, and removed', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'loom-img-'));
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const { paths, remove } = await writeImages(dir, [{ name: '../../evil name.png', mime: 'image/png', size: png.length, data: png.toString('base64') }]);
  assert.equal(paths.length, 1);
  assert.ok(paths[0].startsWith(path.join(dir, 'images') + path.sep), paths[0]);
  assert.match(path.basename(paths[0]), /^[0-9a-f]{12}-evil_name\.png$/);
  assert.deepEqual(await fs.readFile(paths[0]), png);
  await remove();
  await assert.rejects(fs.stat(paths[0]));
  await assert.rejects(writeImages(dir, [{ name: 'x.svg', mime: 'image/svg+xml', size: 3, data: 'PHN2Zz4=' }]), /not a picture/);
  assert.deepEqual(await fs.readdir(path.join(dir, 'images')), [], 'nothing written for a refused picture');
  await fs.rm(dir, { recursive: true });
});

test('a kept record is drawn before loom-lsp answers: its items, model and mode; idle when its last turn ended', () => {
  const a = new Transcript('/w', 'w');
  a.model = 'm1';
  a.mode = 'plan';
  const u = a.prompt('hello');
  a.asked(u, 1);
  a.turnEnded(1, 'done');
  const kept = JSON.parse(JSON.stringify(a.saved()));
  const b = new Transcript('/w', 'w');
  assert.ok(b.preview(kept));
  assert.equal(b.previewed, true);
  assert.deepEqual(b.items.map((i) => i.kind), ['user', 'turnEnd']);
  assert.deepEqual([b.header().model, b.header().mode, b.header().state], ['m1', 'plan', 'idle']);
  assert.equal(b.loaded, false, 'not the server\'s yet: nothing is kept from it');
  // A record whose last turn never ended: no state said.
  const c = new Transcript('/w', 'w');
  const v = c.prompt('cut');
  c.asked(v, 2);
  const d = new Transcript('/w', 'w');
  assert.ok(d.preview(JSON.parse(JSON.stringify(c.saved()))));
  assert.notEqual(d.header().state, 'idle');
  assert.equal(new Transcript('/w', 'w').preview(undefined), false);
});
