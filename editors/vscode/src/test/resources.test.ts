import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { fill, resourceChoices, resourceItem } from '../resources';
import type { MCPResource } from '../wire.gen';

const doc: MCPResource = { server: 'ev', uri: 'demo://resource/static/document/architecture.md', name: 'architecture.md', description: 'The architecture\nmore' };
const tmpl: MCPResource = { server: 'ev', template: 'demo://resource/dynamic/text/{resourceId}', variables: ['resourceId'], name: 'Dynamic Text Resource' };

test('loom.mcpResources as pick items: server and name, the uri or template beside, the first line of the description', () => {
  const c = resourceChoices([doc, tmpl]);
  assert.deepEqual(c.map((x) => [x.label, x.description, x.detail]), [
    ['$(plug) ev: architecture.md', doc.uri, 'The architecture'],
    ['$(symbol-parameter) ev: Dynamic Text Resource', tmpl.template, undefined],
  ]);
  assert.deepEqual(resourceChoices(null), [], 'an older loom-lsp, or none offered');
});

test('a resource is attached by its uri; a template asks each variable, then is attached with its arguments', async () => {
  const asked: string[] = [];
  assert.deepEqual(await resourceItem(doc, async () => { throw new Error('asked'); }),
    { kind: 'resource', label: 'ev: architecture.md', server: 'ev', uri: doc.uri });
  const got = await resourceItem(tmpl, async (o) => { asked.push(`${o.title} | ${o.prompt}`); return ' 3 '; });
  assert.deepEqual(got, {
    kind: 'resource', label: 'ev: demo://resource/dynamic/text/3', server: 'ev',
    template: tmpl.template, arguments: { resourceId: '3' },
  });
  assert.deepEqual(asked, ['ev: Dynamic Text Resource (1/1) | resourceId of demo://resource/dynamic/text/{resourceId}']);
  assert.equal(await resourceItem(tmpl, async () => undefined), undefined, 'dismissed: nothing attached');
  assert.equal(await resourceItem(tmpl, async () => '  '), undefined, 'left empty: nothing attached');
  assert.equal(fill('x://{a}/{b}', { a: '1' }), 'x://1/{b}');
});
