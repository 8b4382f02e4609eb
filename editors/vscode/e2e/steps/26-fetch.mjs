// Step 26: the web fetch tool in the card. The page server runs on
// loopback, which the user allowed by name in their own loom.toml
// (tools.fetch_private, written by harness.mjs); tools.fetch stays at its
// default, "ask". The card shows the URL before anything is fetched;
// "Always allow this host" keeps the host for the folder (the user's
// rule, outside the repository), so the next page from it is fetched
// unasked, and "Loom: Approval Rules…" lists it.
import * as assert from 'node:assert/strict';
import http from 'node:http';
import { addRules, ask, chat, shot, step, until, waitIdle } from '../harness.mjs';

const changelog = { name: 'fetch', args: { url: '' } };
const news = { name: 'fetch', args: { url: '' } };
addRules(
  { when: /read the lib changelog/i, replies: [{ tool: changelog }, { text: ['The changelog says lib.Open is now lib.OpenFile.'] }] },
  { when: /read the lib news/i, replies: [{ tool: news }, { text: ['Read the news too.'] }] },
);

step('26. a fetch is asked with its URL before anything is fetched; "Always allow this host" fetches the next page from it unasked', async () => {
  const paths = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><body><h1>lib changelog</h1><h2>v2.0.0</h2><p>Breaking: <code>lib.Open</code> is renamed <code>lib.OpenFile</code>.</p></body></html>');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const base = `http://localhost:${srv.address().port}`;
    changelog.args.url = `${base}/CHANGELOG.html`;
    news.args.url = `${base}/NEWS.html`;
    const said = async () => (await chat().locator('.log .items').textContent()) ?? '';

    await ask('Read the lib changelog');
    const card = chat().locator('.card.tool[data-tool="fetch"]').last();
    await card.locator('button.always-host').waitFor({ timeout: 60_000 });
    assert.match((await card.textContent()) ?? '', /CHANGELOG\.html/, 'the card shows the URL');
    assert.deepEqual(paths, [], 'nothing is fetched before the answer');
    assert.match((await card.locator('button.always-host').getAttribute('title')) ?? '', /Pages from localhost are fetched without asking in this folder/);
    await card.scrollIntoViewIfNeeded();
    await shot('26', 'fetch-approval');
    await card.locator('button.always-host').click();
    await until('the answer from the changelog', async () => /The changelog says lib\.Open is now lib\.OpenFile\./.test(await said()), 60_000);
    await waitIdle();
    assert.deepEqual(paths, ['/CHANGELOG.html']);

    await ask('Read the lib news');
    await until('the second answer', async () => /Read the news too\./.test(await said()), 60_000);
    await waitIdle();
    assert.deepEqual(paths, ['/CHANGELOG.html', '/NEWS.html'], 'the second page is fetched');
    const second = chat().locator('.card.tool[data-tool="fetch"]').last();
    assert.match((await second.textContent()) ?? '', /NEWS\.html/);
    assert.equal(await second.locator('button.deny').count(), 0, 'the host\'s page is not asked again');
    await second.scrollIntoViewIfNeeded();
    await shot('26', 'fetch-host-allowed');
  } finally {
    srv.close();
  }
});
