// What the chat keeps across a window reload (keptstore.ts): the shown
// conversation's record and which conversation was shown, so that the
// next window draws it at activation, before loom-lsp answers.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Conversations } from '../conversations';
import { KeptConversations, TranscriptStore } from '../keptstore';
import type { Transcript } from '../transcript';

/** The workspace's Memento: a map, and a promise per key of its next write. */
class FakeStore implements TranscriptStore {
  readonly values = new Map<string, unknown>();
  private readonly waiting = new Map<string, () => void>();

  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }

  update(key: string, value: unknown): Thenable<void> {
    // As the Memento: a copy (JSON), not the live object.
    this.values.set(key, value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
    this.waiting.get(key)?.();
    this.waiting.delete(key);
    return Promise.resolve();
  }

  /** Resolves at the next write of key. */
  written(key: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(key, resolve));
  }
}

/** A window's chat state: its conversations and what it keeps. */
function windowOn(store: FakeStore, delayMs = 0) {
  const convs = new Conversations(() => 'w');
  const kept = new KeptConversations(store, (t: Transcript) => convs.isShown(t.folder, t.conversation), delayMs);
  return { convs, kept };
}

/** A finished turn in t, as the server draws it. */
function oneTurn(t: Transcript, prompt: string): void {
  t.loaded = true;
  const u = t.prompt(prompt);
  t.asked(u, 1);
  t.turnEnded(1, 'done');
}

test('the default conversation (never picked from the list) is remembered as shown when its record is written; the next window draws it', async () => {
  const store = new FakeStore();
  const a = windowOn(store);
  // The server names the folder's most recent conversation: it becomes the shown one.
  assert.ok(a.convs.adopt('/w', 'c1'));
  const t = a.convs.shown('/w');
  oneTurn(t, 'explain the project');
  const written = store.written('loom.transcript:/w#c1');
  a.kept.keep(t);
  await written;
  assert.equal(a.kept.rememberedShown('/w'), 'c1');

  // The next window: what drawKept draws, before loom-lsp has started.
  const b = windowOn(store);
  const id = b.kept.rememberedShown('/w');
  assert.equal(id, 'c1');
  const u = b.convs.show('/w', id!).transcript;
  assert.ok(u.preview(b.kept.recordOf('/w', id!)));
  assert.deepEqual(u.items.map((i) => i.kind), ['user', 'turnEnd']);
  assert.equal(u.header().state, 'idle');
});

test('a conversation running in the background is kept, but does not become the one the next window shows', async () => {
  const store = new FakeStore();
  const w = windowOn(store);
  w.convs.adopt('/w', 'shown');
  const shown = w.convs.shown('/w');
  oneTurn(shown, 'first');
  const other = w.convs.get('/w', 'other');
  oneTurn(other, 'second');
  await w.kept.flush(w.convs.all());
  assert.equal(w.kept.rememberedShown('/w'), 'shown');
  assert.ok(w.kept.recordOf('/w', 'other'), 'the background conversation\'s record');
  const writes = store.written('loom.transcript:/w#other');
  w.kept.keep(other);
  await writes;
  assert.equal(w.kept.rememberedShown('/w'), 'shown');
});

test('flush writes at once what waits (no timer left), capped; a forgotten record is gone', async () => {
  const store = new FakeStore();
  const w = windowOn(store, 60_000);
  w.convs.adopt('/w', 'c1');
  const t = w.convs.shown('/w');
  oneTurn(t, 'run it');
  t.tool({ folder: '/w', conversation: 'c1', turn: 1, id: 'call-1', name: 'bash', summary: 'ran', status: 'succeeded' });
  const ran = t.items.find((i) => i.kind === 'tool');
  assert.ok(ran && ran.kind === 'tool');
  ran.output = 'x'.repeat(30_000);
  w.kept.keep(t); // a minute away: only flush can write it
  await w.kept.flush(w.convs.all());
  const rec = w.kept.recordOf('/w', 'c1');
  assert.ok(rec);
  assert.equal(w.kept.rememberedShown('/w'), 'c1');
  const card = rec.items.find((i) => i.kind === 'tool');
  assert.ok(card && card.kind === 'tool');
  assert.ok(card.output.length < 21_000, `output capped: ${card.output.length}`);
  await w.kept.forget('/w', 'c1');
  assert.equal(w.kept.recordOf('/w', 'c1'), undefined);
});
