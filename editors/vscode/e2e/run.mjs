// End-to-end tests of the Loom extension inside real VS Code: code-server
// (VS Code in the browser, on Node 24) driven by Debian's Chromium through
// playwright-core, a loom-lsp built from this checkout, and a scripted
// OpenAI-compatible model on loopback. It goes through the eight
// steps as a user would, screenshots each, and prints three times:
// prompt -> first text on screen, Stop -> idle, edit -> buffer changed.
//
//   LOOM_LSP=/path/to/loom-lsp VSIX=/path/to/loom.vsix node --test run.mjs
//
// Environment: LOOM_LSP and VSIX (required), CHROMIUM (default
// /usr/bin/chromium), E2E_SCREENSHOTS (default ./screenshots).
import { after, before, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startModel } from './model.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const loomLsp = must('LOOM_LSP');
const vsix = must('VSIX');
const shots = path.resolve(process.env.E2E_SCREENSHOTS ?? path.join(here, 'screenshots'));
const codeServer = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const STEP_TIMEOUT = 150_000;

function must(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`set ${name}`);
  }
  return path.resolve(v);
}

// --- the model's script -------------------------------------------------------

const story = Array.from({ length: 400 }, (_, i) => `word${i} `);
const rules = [
  {
    when: /explain the project/i,
    reply: {
      delayMs: 120,
      text: [
        '# The project\n\n', 'This is a **tiny** ', 'greeting project. ', 'It has ', 'one file:\n\n',
        '| file | what |\n', '|---|---|\n', '| `hello.txt` | the greeting |\n', '| `bad.json` | a broken config |\n\n',
        'To print it:\n\n', '```bash\n', 'cat hello.txt\n', '```\n\n', 'That is *all* ', 'there is.',
      ],
    },
  },
  {
    when: /run the greeting script/i,
    reply: { text: ['Running it.'], tool: { name: 'bash', args: { command: 'echo hello-from-bash' } } },
    afterTool: { text: ['The command printed `hello-from-bash`.'] },
  },
  {
    when: /delete the build folder/i,
    reply: { text: ['Deleting it.'], tool: { name: 'bash', args: { command: 'rm -rf build' } } },
    afterTool: { text: ['You denied it, so I left the folder alone.'] },
  },
  {
    when: /say goodbye in hello\.txt/i,
    replies: [
      { tool: { name: 'read_file', args: { path: 'hello.txt' } } },
      { tool: { name: 'edit_file', args: { path: 'hello.txt', old_string: 'Hello', new_string: 'Goodbye' } } },
      { text: ['I changed the greeting to **Goodbye**.'] },
    ],
  },
  {
    when: /frame hello\.txt/i,
    replies: [
      { tool: { name: 'read_file', args: { path: 'hello.txt' } } },
      { tool: { name: 'write_file', args: { path: 'hello.txt', content: '# greeting\nHello, world!\nA second line.\n# end\n' } } },
      { text: ['Framed it as you decided.'] },
    ],
  },
  { when: /tell me a long story/i, reply: { delayMs: 80, text: story } },
  { when: /think it over/i, reply: { reasoning: ['The user wants ', 'a considered answer.'], text: ['Considered: yes.'] } },
  { when: /about to be compacted/i, reply: { text: ['Goals: greet the world. Decisions: Goodbye in hello.txt.'] } },
  { when: /say ok/i, reply: { text: ['ok, ready for more'] } },
  { when: /are you there/i, reply: { text: ['yes'] } },
  {
    when: /Fix this problem/i,
    reply: { text: ['The value of `version` is missing; set it to a string such as `"1.0.0"`.'] },
  },
];

// --- setup ----------------------------------------------------------------------

let tmp, ws, model, cs, browser, page, url;
const times = {};
const shotNames = {};

function git(...args) {
  return execFileSync('git', args, { cwd: ws, encoding: 'utf8' });
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function until(what, fn, timeout = 30_000, every = 25) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) {
        return v;
      }
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}${last ? ': ' + last.message : ''}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

async function shot(step, name) {
  const file = `${step}-${name}.png`;
  await page.screenshot({ path: path.join(shots, file) });
  (shotNames[step] ??= []).push(file);
  return file;
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  for (const f of fs.readdirSync(shots)) {
    if (f.endsWith('.png')) {
      fs.rmSync(path.join(shots, f));
    }
  }
  console.log(`# screenshots: ${shots}`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loom-vscode-e2e-'));
  ws = path.join(tmp, 'greeting');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'hello.txt'), 'Hello, world!\nA second line.\n');
  fs.writeFileSync(path.join(ws, 'bad.json'), '{\n  "name": "demo",\n  "version": \n}\n');
  // Short retries, so step 6 ends in seconds.
  fs.writeFileSync(path.join(ws, '.loom.toml'), '[agent]\nretry_base = "200ms"\nretry_max = "400ms"\nmax_retries = 2\n');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: ws });
  git('config', 'user.email', 'e2e@loom-lsp.invalid');
  git('config', 'user.name', 'e2e');
  git('add', '-A');
  git('commit', '-qm', 'initial');

  model = await startModel(rules);
  const data = path.join(tmp, 'data');
  const exts = path.join(tmp, 'extensions');
  fs.mkdirSync(path.join(data, 'User'), { recursive: true });
  // The user's settings, as they would set them in the Settings editor.
  fs.writeFileSync(path.join(data, 'User', 'settings.json'), JSON.stringify({
    'loom.path': loomLsp,
    'loom.model.provider': 'openai',
    'loom.model.baseUrl': model.url,
    'loom.model.name': 'scripted-coder',
    'loom.tools.bash': 'ask',
    'loom.trace.server': process.env.E2E_TRACE ? 'verbose' : 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'update.mode': 'none',
    'git.enabled': false,
    'window.zoomLevel': 0,
  }, null, 2));

  const common = ['--user-data-dir', data, '--extensions-dir', exts];
  const inst = spawnSync(process.execPath, [codeServer, ...common, '--install-extension', vsix], { encoding: 'utf8' });
  assert.equal(inst.status, 0, `--install-extension failed:\n${inst.stdout}\n${inst.stderr}`);
  assert.match(inst.stdout, /successfully installed/i);

  const port = await freePort();
  url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`;
  cs = spawn(process.execPath, [codeServer, ...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws], {
    detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const csLog = fs.createWriteStream(path.join(shots, 'code-server.log'));
  cs.stdout.pipe(csLog);
  cs.stderr.pipe(csLog);
  await until('code-server to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000, 200);

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${port}` });
  page = await ctx.newPage();
});

after(async () => {
  await browser?.close().catch(() => {});
  if (cs?.pid) {
    try {
      process.kill(-cs.pid, 'SIGTERM');
    } catch { /* gone */ }
    const gone = await new Promise((r) => {
      const t = setTimeout(() => r(false), 5000);
      cs.once('exit', () => {
        clearTimeout(t);
        r(true);
      });
      if (cs.exitCode !== null) {
        r(true);
      }
    });
    try {
      process.kill(-cs.pid, 'SIGKILL'); // the group's stragglers (extension host, loom-lsp)
    } catch { /* all gone */ }
    if (!gone) {
      console.log('# code-server needed SIGKILL');
    }
  }
  await model?.close();
  console.log('\n# screenshots written to ' + shots);
  for (const [step, files] of Object.entries(shotNames)) {
    console.log(`#   ${step}: ${files.join(', ')}`);
  }
  console.log('# times (ms): ' + JSON.stringify(times));
  fs.writeFileSync(path.join(shots, 'times.json'), JSON.stringify({ times, screenshots: shotNames }, null, 2) + '\n');
  if (tmp && !process.env.E2E_KEEP) {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// --- the workbench and the panel --------------------------------------------

function chat() {
  return page.frameLocator('iframe.webview').first().frameLocator('iframe#active-frame');
}

async function runCommand(title) {
  await page.keyboard.press('F1');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible' });
  await box.fill('>' + title);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
  await row.waitFor({ state: 'visible' });
  await box.press('Enter');
}

async function openFile(name) {
  await page.keyboard.press('Control+P');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible' });
  await box.fill(name);
  await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: name }).first().waitFor();
  await box.press('Enter');
  await page.locator(`.tabs-container .tab[aria-label*="${name}"]`).first().waitFor();
}

async function openWorkbench() {
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 120_000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().waitFor({ timeout: 120_000 });
}

async function openPanel() {
  await runCommand('Loom: Open the Chat');
  await chat().locator('textarea.input').waitFor({ timeout: 30_000 });
}

async function headerState() {
  return (await chat().locator('.bar .state').textContent())?.trim();
}

async function waitIdle(timeout = 30_000) {
  await until('the panel to be idle', async () => (await headerState()) === 'idle' &&
    (await chat().locator('button.send').textContent()) === 'Send', timeout);
}

async function ask(text) {
  const input = chat().locator('textarea.input');
  await input.click();
  await input.fill(text);
  const t0 = Date.now();
  await input.press('Enter');
  return t0;
}

/** The visible text of the editor showing name (Monaco draws spaces as U+00A0). */
async function editorText(name) {
  const byUri = page.locator(`.monaco-editor[data-uri$="${name}"] .view-lines`);
  const lines = (await byUri.count()) > 0 ? byUri.first() : page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
  return ((await lines.textContent()) ?? '').replace(/\u00a0/g, ' ');
}

// --- the steps ------------------------------------------------------------------

let broken = '';

/** A step of the suite: skipped once one failed; a failure leaves a screenshot. */
function step(name, fn, timeout = STEP_TIMEOUT) {
  test(name, async (t) => {
    if (broken) {
      t.skip(`after the failure of "${broken}"`);
      return;
    }
    let timer;
    try {
      await Promise.race([fn(), new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`step timed out after ${timeout} ms`)), timeout);
      })]);
    } catch (e) {
      broken = name;
      await page?.screenshot({ path: path.join(shots, `failed-${name.slice(0, 2).replace(/\W/g, '')}.png`) }).catch(() => {});
      throw e;
    } finally {
      clearTimeout(timer);
    }
  });
}

step('1. the .vsix installs; a git workspace opens with a file in a tab', async () => {
  await openWorkbench();
  await openFile('hello.txt');
  await until('hello.txt in the editor', async () => (await editorText('hello.txt')).includes('Hello, world!'));
  await openPanel();
  await until('the model name in the header', async () => (await chat().locator('.bar .model').textContent()) === 'scripted-coder');
  await waitIdle();
  const status = await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().textContent();
  assert.match(status ?? '', /Loom: idle/);
  await shot('01', 'workspace-and-panel');
}, 300_000);

step('2. a prompt streams, rendered as markdown', async () => {
  const t0 = await ask('Explain the project');
  const answer = chat().locator('.msg.assistant .markdown').last();
  await until('the first streamed text', async () => ((await answer.textContent()) ?? '').length > 0, 30_000, 10);
  times.promptToFirstText = Date.now() - t0;
  const first = (await answer.textContent()) ?? '';
  await shot('02', 'streaming-1');
  await until('more text', async () => ((await answer.textContent()) ?? '').length > first.length + 20);
  const second = (await answer.textContent()) ?? '';
  await shot('02', 'streaming-2');
  assert.ok(second.length > first.length, 'the second screenshot shows more text');
  await waitIdle();
  assert.equal(await answer.locator('h1').textContent(), 'The project');
  assert.equal(await answer.locator('strong').first().textContent(), 'tiny');
  assert.equal(await answer.locator('table td').count(), 4, 'the table is rendered');
  assert.match((await answer.locator('.code pre code').textContent()) ?? '', /cat hello\.txt/);
  assert.equal(await answer.locator('.code button[data-act="insert"]').count(), 1, 'code blocks have Insert');
  assert.equal(await chat().locator('.msg.user').last().locator('.text').textContent(), 'Explain the project');
  await until('usage in the header', async () => /150 tokens/.test((await chat().locator('.bar .usage').textContent()) ?? ''));
  await shot('02', 'markdown');
});

step('3. a bash card: Allow in the card runs it; Deny on another', async () => {
  await ask('Run the greeting script');
  const card = chat().locator('.card.tool').filter({ hasText: 'echo hello-from-bash' }).last();
  await card.locator('button.allow').waitFor();
  assert.equal(await card.locator('.tool-title').textContent(), '$ echo hello-from-bash');
  await until('status bar: waiting for approval', async () =>
    /waiting for approval/.test((await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().textContent()) ?? ''));
  await shot('03', 'approval-asked');
  await card.locator('button.allow').click();
  await until('the card to succeed', async () => (await card.getAttribute('class'))?.includes('s-succeeded'));
  await waitIdle();
  // The conversation's order: the text before the call above its card,
  // the text after the result below it.
  const order = await chat().locator('.log').evaluate((log) => [...log.children].map((n) =>
    n.classList.contains('card') ? 'card:' + (n.querySelector('.tool-title')?.textContent ?? '') : n.textContent?.trim() ?? ''));
  const at = (pred) => order.findIndex(pred);
  const before = at((x) => x.includes('Running it.')), cardAt = at((x) => x === 'card:$ echo hello-from-bash'),
    after = at((x) => x.includes('The command printed'));
  assert.ok(before >= 0 && before < cardAt && cardAt < after, `text, card and text in the conversation's order: ${JSON.stringify(order.slice(-5))}`);
  await card.locator('details.output summary').click();
  assert.match((await card.locator('pre.out').textContent()) ?? '', /hello-from-bash/);
  await waitIdle();
  await shot('03', 'allowed-output');

  await ask('Delete the build folder');
  const denied = chat().locator('.card.tool').filter({ hasText: 'rm -rf build' }).last();
  await denied.locator('button.deny').click();
  await until('Denied in the card', async () => ((await denied.locator('.approval').textContent()) ?? '').includes('Denied'));
  await waitIdle();
  assert.match((await chat().locator('.msg.assistant').last().textContent()) ?? '', /left the folder alone/);
  await shot('03', 'denied');
});

step('4. an edit: diff in the card, the tab changes, one commit with exactly that change; Undo restores', async () => {
  const before = git('rev-parse', 'HEAD').trim();
  await ask('Say goodbye in hello.txt');
  const card = chat().locator('.card.tool[data-tool="edit_file"]').last();
  await card.waitFor();
  const tEdit = Date.now();
  await until('the tab to show the edit', async () => (await editorText('hello.txt')).includes('Goodbye, world!'), 30_000, 10);
  times.editToBufferChanged = Date.now() - tEdit;
  await until('the diff in the card', async () => ((await card.locator('.diff-body .add').textContent()) ?? '').includes('Goodbye'));
  assert.match((await card.locator('.diff-body .del').textContent()) ?? '', /Hello, world!/);
  const commitLine = chat().locator('.commit').last();
  await commitLine.waitFor();
  await waitIdle();
  const head = git('rev-parse', 'HEAD').trim();
  assert.notEqual(head, before, 'a new commit');
  assert.equal(git('rev-parse', 'HEAD~1').trim(), before, 'exactly one commit');
  assert.equal(git('show', '--format=', '--name-only', 'HEAD').trim(), 'hello.txt');
  assert.equal(git('show', 'HEAD:hello.txt'), 'Goodbye, world!\nA second line.\n');
  const shown = git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(shown, ['-Hello, world!', '+Goodbye, world!']);
  assert.match((await commitLine.textContent()) ?? '', new RegExp(head.slice(0, 7)));
  await shot('04', 'edit-diff-commit');

  await card.locator('button.open-diff').click();
  await page.locator('.tabs-container .tab').filter({ hasText: "Loom's edit" }).first().waitFor();
  await shot('04', 'open-diff');
  await page.keyboard.press('Control+W');

  await commitLine.locator('button.undo').click();
  await until('the commit line to say undone', async () => (await commitLine.getAttribute('class'))?.includes('is-undone'));
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'Hello, world!\nA second line.\n');
  await until('the buffer restored', async () => (await editorText('hello.txt')).includes('Hello, world!'));
  await shot('04', 'undone');
});

step('5. Stop mid-stream ends the turn, marked cancelled; the next prompt works', async () => {
  await ask('Tell me a long story');
  const answer = chat().locator('.msg.assistant').last();
  await until('the story to stream', async () => /word3 /.test((await answer.textContent()) ?? ''));
  const stop = chat().locator('button.send');
  assert.equal(await stop.textContent(), 'Stop');
  await shot('05', 'streaming-with-stop');
  const t0 = Date.now();
  await stop.click();
  await waitIdle(10_000);
  times.stopToIdle = Date.now() - t0;
  // The issue asks for 1 s; on a shared 2-core machine a test asserts no
  // bound tighter than a few seconds. The time is printed and noted.
  assert.ok(times.stopToIdle < 10_000, `the turn ended ${times.stopToIdle} ms after Stop`);
  await chat().locator('.turn-end.cancelled').last().waitFor();
  assert.ok(!((await answer.textContent()) ?? '').includes('word399'), 'the stream stopped');
  await shot('05', 'cancelled');
  await ask('Say ok');
  await until('the next answer', async () => /ok, ready for more/.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  await waitIdle();
  await shot('05', 'next-prompt');
});

step('6. model server down: the retry and the final error appear in the chat, once', async () => {
  const port = model.port;
  await model.close();
  await ask('Are you there?');
  const retry = chat().locator('.notice.warning').filter({ hasText: 'retrying in' }).first();
  await retry.waitFor({ timeout: 30_000 });
  const error = chat().locator('.notice.error').last();
  await error.waitFor({ timeout: 30_000 });
  await waitIdle();
  const retryText = (await retry.textContent()) ?? '';
  assert.equal(retryText.split('retrying in').length - 1, 1, `said once: ${retryText}`);
  const errText = (await error.textContent()) ?? '';
  assert.match(errText, /reach the provider|connection refused/i);
  assert.equal(await chat().locator('.notice.error').filter({ hasText: errText.slice(0, 40) }).count(), 1, 'the error is shown once');
  await shot('06', 'retry-and-error');
  model = await startModel(rules, port);
});

step('7. a window reload redraws the conversation', async () => {
  await page.evaluate(() => { window.__loomBeforeReload = true; });
  const t0 = Date.now();
  await runCommand('Developer: Reload Window');
  await until('the window to reload', async () => !(await page.evaluate(() => window.__loomBeforeReload === true)), 60_000, 100);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  times.reloadToWorkbench = Date.now() - t0;
  await page.locator('.statusbar-item').filter({ hasText: 'Loom:' }).first().waitFor({ timeout: 120_000 });
  times.reloadToExtension = Date.now() - t0;
  await openPanel();
  await until('the conversation redrawn', async () =>
    (await chat().locator('.msg.user').filter({ hasText: 'Run the greeting script' }).count()) === 1 &&
    (await chat().locator('.card.tool').filter({ hasText: 'echo hello-from-bash' }).count()) === 1, 60_000);
  times.reloadToRedrawn = Date.now() - t0;
  assert.match((await chat().locator('.log').textContent()) ?? '', /ok, ready for more/);
  await shot('07', 'after-reload');
}, 300_000);

step('8. the code action "Ask Loom to fix" sends the diagnostic', async () => {
  const from = model.requests.length;
  await openFile('bad.json');
  await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 30_000 });
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('F8'); // Go to Next Problem: the cursor goes to the diagnostic
  await page.locator('.marker-widget, .peekview-widget').first().waitFor({ timeout: 10_000 }).catch(() => {});
  await page.keyboard.press('Escape');
  const action = page.locator('.action-widget .monaco-list-row').filter({ hasText: 'Ask Loom to fix' }).first();
  // Ctrl+. can land while the problem peek is still closing, and then no
  // menu opens (seen on an idle machine, never under load): ask again
  // until the quick-fix menu shows, as a user would.
  await until('the quick-fix menu with "Ask Loom to fix"', async () => {
    if (await action.isVisible()) {
      return true;
    }
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+.');
    await action.waitFor({ timeout: 3_000 }).catch(() => {});
    return action.isVisible();
  }, 60_000, 250);
  const label = (await action.textContent()) ?? '';
  await action.click();
  const prompt = chat().locator('.msg.user').last();
  await until('the prompt in the panel', async () => /Fix this problem/.test((await prompt.textContent()) ?? ''));
  await until('the answer', async () => /version/.test((await chat().locator('.msg.assistant').last().textContent()) ?? ''));
  await waitIdle();
  const sent = model.requests.slice(from).map((r) => JSON.stringify(r.messages)).join('\n');
  const diag = label.replace(/^.*Ask Loom to fix:\s*/, '').replace(/…$/, '').trim();
  assert.ok(diag.length > 3, `diagnostic from the label "${label}"`);
  assert.ok(sent.includes('Diagnostic there: ' + diag.slice(0, 20)), `the model saw the diagnostic "${diag}"`);
  assert.match((await prompt.locator('.context').textContent()) ?? '', /Problem: /);
  await shot('08', 'code-action-fix');
});

step('9. "Loom: Compact the Conversation" says in the chat that it compacts and that it did', async () => {
  const from = model.requests.length;
  await runCommand('Loom: Compact the Conversation');
  const notices = chat().locator('.notice');
  await until('the compaction notices', async () => {
    const all = (await notices.allTextContents()).join('\n');
    return /compacting the conversation/.test(all) && /compacted the conversation/.test(all);
  });
  await waitIdle();
  const asked = model.requests.slice(from).map((r) => JSON.stringify(r.messages)).join('\n');
  assert.match(asked, /about to be compacted/, 'the model was asked for the summary');
  await shot('09', 'compacted');
});

step('10. the model\'s thinking shows folded above the answer, never in it', async () => {
  await ask('Think it over');
  const answer = chat().locator('.msg.assistant').last();
  await until('the answer', async () => /Considered: yes\./.test((await answer.textContent()) ?? ''));
  await waitIdle();
  const thought = chat().locator('details.thought').last();
  assert.equal(await thought.getAttribute('open'), null, 'the thinking starts folded');
  assert.doesNotMatch((await answer.textContent()) ?? '', /considered answer/);
  await thought.locator('summary').click();
  await until('the thinking unfolded', async () => /The user wants a considered answer\./.test((await thought.textContent()) ?? ''));
  await shot('10', 'thinking');
});

/** The toast whose text matches re, once visible. */
async function toast(re) {
  const t = page.locator('.notification-toast').filter({ hasText: re }).last();
  await t.waitFor({ timeout: 30_000 });
  return t;
}

step('11. review: with "Review edits before they apply", a change waits; one hunk accepted, one rejected with a comment', async () => {
  await runCommand('Loom: Review Edits Before They Apply (toggle)');
  await toast(/edits now wait for your review/);
  // The server pulls the changed setting; give it a status round trip.
  await until('tools.edits = review on the server', async () => {
    const settings = JSON.parse(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8'));
    return settings['loom.tools.edits'] === 'review';
  });
  const before = git('rev-parse', 'HEAD').trim();
  await ask('Frame hello.txt with a header and a footer');
  const notice = await toast(/Loom proposes a change to hello\.txt \(2 hunks\)/);
  assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'Hello, world!\nA second line.\n', 'nothing written before the review');
  await shot('11', 'proposal');
  await notice.locator('.monaco-button').filter({ hasText: 'Review…' }).click();
  const row2 = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'hunk 2' }).first();
  await row2.waitFor();
  await row2.click(); // unchecks hunk 2
  await shot('11', 'pick-hunks');
  await page.locator('.quick-input-widget input').press('Enter');
  const box = page.locator('.quick-input-widget input');
  await until('the comment box', async () => ((await page.locator('.quick-input-widget').textContent()) ?? '').includes('Why reject'));
  await box.fill('no footer please');
  await box.press('Enter');
  await toast(/applied 1 hunk\(s\), rejected 1/);
  await shot('11', 'review-diff');
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').first().click();
  await until('the tab to show the accepted hunk only', async () => {
    const t = await editorText('hello.txt');
    return t.includes('# greeting') && !t.includes('# end');
  });
  await waitIdle();
  assert.notEqual(git('rev-parse', 'HEAD').trim(), before, 'the accepted hunk is committed');
  const shown = git('show', '--format=', '--unified=0', 'HEAD').split('\n').filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(shown, ['+# greeting']);
  assert.match(JSON.stringify(model.requests.at(-1).messages.at(-1)), /hunk 2 rejected by the user: no footer please/);
  await shot('11', 'accepted-one');
});

step('12. rewind: Restore Checkpoint (files and conversation) takes the agent hunk back, keeps the typed line; Redo', async () => {
  // The user types a line at the end of hello.txt and saves.
  await page.locator('.tabs-container .tab[aria-label^="hello.txt"]').first().click();
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('typed by me\n');
  await page.keyboard.press('Control+S');
  await until('the typed line on disk', async () => fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8').includes('typed by me'));
  await runCommand('Loom: Restore Checkpoint…');
  const turn = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Frame hello.txt' }).first();
  await turn.waitFor();
  await shot('12', 'checkpoints');
  await turn.click();
  const both = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Files and conversation' }).first();
  await both.waitFor();
  await both.click();
  await until('the agent hunk taken back, the typed line kept', async () =>
    fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8') === 'Hello, world!\nA second line.\ntyped by me\n');
  assert.equal(git('log', '-1', '--format=%s').trim(), 'loom: rewind to turn ' + git('log', '-1', '--format=%s').trim().split(' ').pop());
  await until('the tab to reload the restored file', async () => {
    const t = await editorText('hello.txt');
    return !t.includes('# greeting') && t.includes('typed by me');
  });
  // The rewound prompt comes back for editing.
  await until('the prompt back in an input box', async () => (await page.locator('.quick-input-widget input').inputValue()) === 'Frame hello.txt with a header and a footer');
  await shot('12', 'rewound');
  await page.keyboard.press('Escape');
  const restored = await toast(/restored to before turn/);
  await restored.locator('.monaco-button').filter({ hasText: 'Redo' }).click();
  await until('redo brings the hunk back', async () =>
    fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8') === '# greeting\nHello, world!\nA second line.\ntyped by me\n');
  await until('the tab to show it', async () => (await editorText('hello.txt')).includes('# greeting'));
  await shot('12', 'redone');
});
