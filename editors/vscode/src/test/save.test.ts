import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { saveDocuments, SavableDocument } from '../save';

function doc(key: string, isDirty: boolean, result: boolean | Error, saved: string[]): SavableDocument {
  return {
    key,
    isDirty,
    save: async () => {
      if (result instanceof Error) {
        throw result;
      }
      saved.push(key);
      return result;
    },
  };
}

const key = (uri: string) => decodeURIComponent(new URL(uri).pathname);

test('saves the open dirty documents and reports them', async () => {
  const calls: string[] = [];
  const docs = [
    doc('/w/a.go', true, true, calls),
    doc('/w/b.go', false, true, calls),
    doc('/w/unrelated.go', true, true, calls),
  ];
  const got = await saveDocuments(['file:///w/a.go', 'file:///w/b.go', 'file:///w/closed.go'], { documents: () => docs, key });
  assert.deepEqual(got, ['file:///w/a.go', 'file:///w/b.go']);
  assert.deepEqual(calls, ['/w/a.go'], 'only the dirty listed document is saved');
});

test('a failed or throwing save is left out, never thrown', async () => {
  const calls: string[] = [];
  const docs = [doc('/w/veto.go', true, false, calls), doc('/w/boom.go', true, new Error('disk full'), calls), doc('/w/ok.go', true, true, calls)];
  const got = await saveDocuments(['file:///w/veto.go', 'file:///w/boom.go', 'file:///w/ok.go'], { documents: () => docs, key });
  assert.deepEqual(got, ['file:///w/ok.go']);
});

test('a bad uri is skipped', async () => {
  const got = await saveDocuments(['not a uri', 'file:///w/a%20b.go'], {
    documents: () => [doc('/w/a b.go', false, true, [])],
    key,
  });
  assert.deepEqual(got, ['file:///w/a%20b.go']);
});

test('a save that resolves false but leaves the document clean counts as saved (code-server)', async () => {
  let dirty = true;
  const d: SavableDocument = {
    key: '/w/a.go',
    get isDirty() { return dirty; },
    save: async () => {
      dirty = false;
      return false;
    },
  };
  assert.deepEqual(await saveDocuments(['file:///w/a.go'], { documents: () => [d], key }), ['file:///w/a.go']);
});
