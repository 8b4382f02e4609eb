// Conformance test of `loom-lsp acp` with the official ACP TypeScript SDK
// (@agentclientprotocol/sdk 1.9.0: ClientSideConnection + ndJsonStream) as
// the client, against the built binary over real stdio. The model is a
// scripted OpenAI-compatible server on loopback (model.mjs), so the test
// asserts on what the model received.
//
// Run: LOOM_BIN=/path/to/loom-lsp node --test conformance.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { ClientSideConnection, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { ScriptedModel } from "./model.mjs";

const BIN = process.env.LOOM_BIN;
// Wall-clock bounds are loose on purpose (a shared CI machine); the
// measured times are printed and reported in notes/acp.md.
const BOUND_MS = Number(process.env.ACP_BOUND_MS ?? 3000);
const WAIT_MS = 20000;

let model, baseURL, home, work, notes, configFile;
const timings = {};

/** The test's ACP client: unsaved buffers, recorded updates, scripted permission answers. */
class TestClient extends EventEmitter {
  constructor() {
    super();
    this.updates = [];
    this.buffers = new Map();
    this.reads = [];
    this.writes = [];
    this.permissions = [];
    this.pending = [];
    /** @type {(p: any) => any} answers a permission request; default: wait (see pending) */
    this.onPermission = null;
  }
  async sessionUpdate(p) {
    this.updates.push({ ...p, at: performance.now() });
    this.emit("change");
  }
  async readTextFile(p) {
    this.reads.push(p.path);
    this.emit("change");
    if (this.buffers.has(p.path)) return { content: this.buffers.get(p.path) };
    return { content: fs.readFileSync(p.path, "utf8") };
  }
  async writeTextFile(p) {
    this.writes.push(p);
    fs.writeFileSync(p.path, p.content);
    this.buffers.set(p.path, p.content);
    this.emit("change");
    return {};
  }
  requestPermission(p) {
    this.permissions.push(p);
    this.emit("change");
    if (this.onPermission) return this.onPermission(p);
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.emit("change");
    });
  }
  /** What a client does on session/cancel: answer pending permission requests "cancelled". */
  cancelPending() {
    for (const resolve of this.pending.splice(0)) resolve({ outcome: { outcome: "cancelled" } });
  }
  /** Resolves once pred() holds, checked on every change; rejects after WAIT_MS. */
  waitFor(what, pred) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const v = pred();
        if (v) {
          clearTimeout(timer);
          this.off("change", check);
          resolve(v);
        }
      };
      const timer = setTimeout(() => {
        this.off("change", check);
        reject(new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(this.updates.map((u) => u.update.sessionUpdate))}`));
      }, WAIT_MS);
      this.on("change", check);
      check();
    });
  }
  /** The agent's answer text since update `from`: loom's notices (messages of their own, tagged _meta.loom.notice) left out. */
  text(from = 0) {
    return this.updates
      .slice(from)
      .filter((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text" && !u.update._meta?.loom?.notice)
      .map((u) => u.update.content.text)
      .join("");
  }
  /** loom's notices to session id: [{kind, text, index}]. */
  notices(id) {
    return this.updates
      .map((u, index) => ({ u, index }))
      .filter(({ u }) => u.sessionId === id && u.update.sessionUpdate === "agent_message_chunk" && u.update._meta?.loom?.notice)
      .map(({ u, index }) => ({ kind: u.update._meta.loom.notice, text: u.update.content.text, index, messageId: u.update.messageId }));
  }
}

/** The agent process, with the SDK's client connection on its stdio and a copy of every line it writes. */
class Agent {
  constructor() {
    this.spawnedAt = performance.now();
    this.child = spawn(BIN, ["acp", "--base-url", baseURL, "--model", "scripted", "--config", configFile, "--log", path.join(home, "acp.log")], {
      cwd: work,
      env: { ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, "state"), XDG_CONFIG_HOME: path.join(home, "config"), OPENAI_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.stderr = "";
    this.child.stderr.on("data", (c) => (this.stderr += c));
    this.lines = [];
    let partial = "";
    const input = new ReadableStream({
      start: (controller) => {
        this.child.stdout.on("data", (chunk) => {
          partial += chunk.toString("utf8");
          let i;
          while ((i = partial.indexOf("\n")) >= 0) {
            this.lines.push(partial.slice(0, i));
            partial = partial.slice(i + 1);
          }
          this.client.emit("change");
          controller.enqueue(new Uint8Array(chunk));
        });
        this.child.stdout.on("end", () => controller.close());
      },
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() })));
    this.client = new TestClient();
    this.conn = new ClientSideConnection(() => this.client, ndJsonStream(Writable.toWeb(this.child.stdin), input));
  }
  initialize() {
    return this.conn.initialize({
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      clientInfo: { name: "acp-ts-sdk-conformance", version: "1.9.0" },
    });
  }
  /** Closes stdin and returns how the process ended and how long it took. */
  async closeStdin() {
    const t0 = performance.now();
    this.child.stdin.end();
    const ended = await Promise.race([this.exited, new Promise((r) => setTimeout(() => r(null), WAIT_MS))]);
    assert.ok(ended, "the agent did not exit after stdin closed");
    return { ...ended, ms: ended.at - t0 };
  }
}

function git(...args) {
  return execFileSync("git", ["-C", work, ...args], { encoding: "utf8" });
}

function toolUpdates(client, id) {
  return client.updates.filter((u) => (u.update.sessionUpdate === "tool_call" || u.update.sessionUpdate === "tool_call_update") && u.update.toolCallId === id).map((u) => u.update);
}

function lastUserText(body) {
  const users = body.messages.filter((m) => m.role === "user");
  return users.at(-1)?.content ?? "";
}

let agent, sessionId, firstPrompt;

before(async () => {
  assert.ok(BIN, "set LOOM_BIN to the loom-lsp binary");
  model = new ScriptedModel();
  baseURL = await model.start();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "acp-conformance-"));
  work = path.join(home, "work");
  fs.mkdirSync(work);
  fs.mkdirSync(path.join(home, "config"));
  configFile = path.join(home, "loom.toml");
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n');
  notes = path.join(work, "notes.txt");
  fs.writeFileSync(notes, "title\none\ntwo\nthree\ndisk text\n");
  git("init", "-q");
  git("config", "user.name", "conformance");
  git("config", "user.email", "conformance@loom-lsp.invalid");
  git("add", ".");
  git("commit", "-qm", "init");
  agent = new Agent();
});

after(async () => {
  if (agent && agent.child.exitCode === null) agent.child.kill("SIGKILL");
  await model.stop();
  console.log("timings (ms):", JSON.stringify(timings));
  fs.rmSync(home, { recursive: true, force: true });
});

test("initialize", async () => {
  const r = await agent.initialize();
  timings.spawnToInitialize = Math.round(performance.now() - agent.spawnedAt);
  assert.equal(r.protocolVersion, 1);
  assert.equal(r.agentCapabilities.loadSession, true);
  assert.equal(r.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(r.agentCapabilities.promptCapabilities.image, true);
  assert.ok(r.agentCapabilities.sessionCapabilities.list, "sessionCapabilities.list");
  assert.ok(r.agentCapabilities.sessionCapabilities.resume, "sessionCapabilities.resume");
  assert.ok(r.agentCapabilities.sessionCapabilities.delete, "sessionCapabilities.delete");
  assert.ok(r.agentCapabilities.sessionCapabilities.additionalDirectories, "sessionCapabilities.additionalDirectories");
  assert.deepEqual(r.authMethods, []);
  assert.equal(r.agentInfo.name, "loom-lsp");
});

test("session/new", async () => {
  await assert.rejects(agent.conn.newSession({ cwd: "relative/dir", mcpServers: [] }), (e) => e.code === -32602 && /absolute/.test(e.message));
  const r = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  assert.match(r.sessionId, /^loom-/);
  sessionId = r.sessionId;
});

test("prompt with streaming", async () => {
  firstPrompt = "say hello";
  model.respond = () => ({ text: ["Hello", " from", " loom."], paceMs: 20 });
  const from = agent.client.updates.length;
  const t0 = performance.now();
  const first = agent.client.waitFor("the first chunk", () => agent.client.updates.slice(from).find((u) => u.update.sessionUpdate === "agent_message_chunk"));
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: firstPrompt }] });
  timings.promptToFirstChunk = Math.round((await first).at - t0);
  assert.equal(r.stopReason, "end_turn");
  assert.equal(agent.client.text(from), "Hello from loom.");
  assert.ok(agent.client.updates.slice(from).every((u) => u.sessionId === sessionId));
});

test("reasoning streams as agent_thought_chunk, apart from the answer; the response carries the turn's usage", async () => {
  model.respond = () => ({
    reasoning: ["CONF-THOUGHT: ", "be brief."],
    text: ["Brief."],
    usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39, prompt_tokens_details: { cached_tokens: 24 }, completion_tokens_details: { reasoning_tokens: 5 } },
  });
  const from = agent.client.updates.length;
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "think first" }] });
  assert.equal(r.stopReason, "end_turn");
  const thought = agent.client.updates
    .slice(from)
    .filter((u) => u.update.sessionUpdate === "agent_thought_chunk" && u.update.content.type === "text")
    .map((u) => u.update.content.text)
    .join("");
  assert.equal(thought, "CONF-THOUGHT: be brief.");
  assert.equal(agent.client.text(from), "Brief.");
  assert.deepEqual(r.usage, { inputTokens: 30, outputTokens: 9, totalTokens: 39, cachedReadTokens: 24, thoughtTokens: 5 });
  // The reasoning is never sent back to the model.
  model.respond = () => ({ text: ["ok"] });
  await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "and now?" }] });
  assert.ok(!model.requests.some((b) => JSON.stringify(b).includes("CONF-THOUGHT")), "a request carries the reasoning");
});

test("tool call lifecycle, reading the unsaved buffer through fs/read_text_file", async () => {
  agent.client.buffers.set(notes, "title\none\ntwo\nthree\nUNSAVED buffer text\n");
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") return { text: ["Read it."] };
    return { text: ["Looking."], toolCalls: [{ id: "read1", name: "read_file", arguments: JSON.stringify({ path: "notes.txt" }) }] };
  };
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "what is in notes.txt?" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.ok(agent.client.reads.includes(notes), "fs/read_text_file was not used");
  // What the model received: the client's text, not the disk's.
  const toolMsg = model.lastMessages().findLast((m) => m.role === "tool");
  assert.match(toolMsg.content, /UNSAVED buffer text/);
  assert.doesNotMatch(toolMsg.content, /disk text/);
  const ups = toolUpdates(agent.client, "read1");
  assert.equal(ups[0].sessionUpdate, "tool_call");
  assert.equal(ups[0].kind, "read");
  assert.equal(ups[0].title, "Read notes.txt");
  assert.equal(ups[0].status, "pending");
  assert.equal(ups[0].locations[0].path, notes);
  assert.deepEqual(ups[0].rawInput, { path: "notes.txt" });
  assert.deepEqual(ups.slice(1).map((u) => u.status), ["in_progress", "completed"]);
  assert.match(ups[2].content[0].content.text, /UNSAVED buffer text/);
});

test("writing through fs/write_text_file; the hook commits the agent's change, not the user's unsaved line", async () => {
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") return { text: ["Edited."] };
    return { toolCalls: [{ id: "edit1", name: "edit_file", arguments: JSON.stringify({ path: "notes.txt", old_string: "title", new_string: "TITLE" }) }] };
  };
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "capitalize the title in notes.txt" }] });
  assert.equal(r.stopReason, "end_turn");
  const want = "TITLE\none\ntwo\nthree\nUNSAVED buffer text\n";
  assert.deepEqual(agent.client.writes.map((w) => [w.path, w.content, w.sessionId]), [[notes, want, sessionId]]);
  const ups = toolUpdates(agent.client, "edit1");
  assert.equal(ups[0].kind, "edit");
  assert.equal(ups[0].title, "Edit notes.txt");
  assert.equal(ups.at(-1).status, "completed", JSON.stringify(ups.at(-1)));
  const diff = ups.at(-1).content.find((c) => c.type === "diff");
  assert.deepEqual({ path: diff.path, oldText: diff.oldText, newText: diff.newText }, { path: notes, oldText: "title\none\ntwo\nthree\nUNSAVED buffer text\n", newText: want });
  assert.equal(git("show", "HEAD:notes.txt"), "TITLE\none\ntwo\nthree\ndisk text\n");
  assert.match(git("log", "-1", "--format=%B"), /capitalize the title/);
});

/** What the agent sent, in wire order, from line `from` of its stdout: tool calls' updates, fs requests, permission requests. */
function wireEvents(from = 0) {
  const out = [];
  for (const line of agent.lines.slice(from)) {
    const m = JSON.parse(line);
    const p = m.params ?? {};
    if (m.method === "session/update" && (p.update.sessionUpdate === "tool_call" || p.update.sessionUpdate === "tool_call_update")) {
      out.push({ kind: p.update.sessionUpdate, session: p.sessionId, call: p.update.toolCallId, status: p.update.status ?? "", paths: (p.update.locations ?? []).map((l) => l.path) });
    } else if (m.method === "fs/read_text_file" || m.method === "fs/write_text_file") {
      out.push({ kind: m.method, session: p.sessionId, paths: [p.path] });
    } else if (m.method === "session/request_permission") {
      out.push({ kind: "permission", session: p.sessionId, call: p.toolCall.toolCallId });
    }
  }
  return out;
}

/** Each fs request of events, with what is wrong about it: none when a tool call of its session about its file was announced and is in progress. */
function unexplainedRequests(events) {
  const calls = new Map();
  const wrong = [];
  let n = 0;
  events.forEach((ev, i) => {
    const key = `${ev.session}/${ev.call}`;
    if (ev.kind === "tool_call") calls.set(key, { status: ev.status, paths: [...ev.paths] });
    else if (ev.kind === "tool_call_update") {
      const c = calls.get(key);
      if (!c) return wrong.push(`${i}: update of ${ev.call} before its tool_call`);
      if (ev.status) c.status = ev.status;
      c.paths.push(...ev.paths);
    } else if (ev.kind.startsWith("fs/")) {
      n++;
      const ok = [...calls].some(([k, c]) => k.startsWith(`${ev.session}/`) && c.status === "in_progress" && c.paths.includes(ev.paths[0]));
      if (!ok) wrong.push(`${i}: ${ev.kind} ${ev.paths[0]} with no tool call of its session about it in progress`);
    }
  });
  return { n, wrong };
}

test("every fs request comes after the tool_call (and in_progress) of the tool that causes it, on every tool of a multi-tool turn", async () => {
  const order = path.join(work, "order.txt");
  fs.writeFileSync(order, "order one\n");
  git("add", "order.txt");
  git("commit", "-qm", "order.txt");
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") return { text: ["Done with the tools."] };
    return {
      toolCalls: [
        { id: "ord-read", name: "read_file", arguments: JSON.stringify({ path: "order.txt" }) },
        { id: "ord-notes", name: "read_file", arguments: JSON.stringify({ path: "notes.txt" }) },
        { id: "ord-edit", name: "edit_file", arguments: JSON.stringify({ path: "order.txt", old_string: "one", new_string: "ONE" }) },
        { id: "ord-write", name: "write_file", arguments: JSON.stringify({ path: "order-new.txt", content: "new\n" }) },
        { id: "ord-reread", name: "read_file", arguments: JSON.stringify({ path: "order-new.txt" }) },
      ],
    };
  };
  const from = agent.lines.length;
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "use five tools" }] });
  assert.equal(r.stopReason, "end_turn");
  const events = wireEvents(from);
  const { n, wrong } = unexplainedRequests(events);
  assert.ok(n >= 5, `only ${n} fs requests: ${JSON.stringify(events)}`);
  assert.deepEqual(wrong, [], JSON.stringify(events, null, 1));
  for (const id of ["ord-read", "ord-notes", "ord-edit", "ord-write", "ord-reread"]) {
    assert.deepEqual(toolUpdates(agent.client, id).map((u) => u.status ?? ""), ["pending", "in_progress", "completed"], id);
  }
  assert.equal(fs.readFileSync(order, "utf8"), "order ONE\n");
});

function bashTurn(id, command) {
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") return { text: ["after bash"] };
    return { toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command }) }] };
  };
}

test("permission allow", async () => {
  bashTurn("bash-allow", "echo yes > allowed.txt");
  agent.client.onPermission = (p) => {
    // Allow once first; the folder's approval rules (this exact command)
    // and the session-wide choices after it.
    const ids = p.options.map((o) => o.optionId);
    assert.equal(ids[0], "allow_once");
    for (const id of ["allow_rule_exact", "allow_always", "reject_once", "reject_always"]) {
      assert.ok(ids.includes(id), `option ${id} offered: ${ids}`);
    }
    assert.match(p.options.find((o) => o.optionId === "allow_rule_exact").name, /`echo yes ?> ?allowed\.txt`/);
    assert.ok(p.options.every((o) => ["allow_once", "allow_always", "reject_once", "reject_always"].includes(o.kind)), "every option has an ACP kind");
    assert.equal(p.toolCall.toolCallId, "bash-allow");
    return { outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId } };
  };
  const fromLine = agent.lines.length;
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "run it" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.equal(fs.readFileSync(path.join(work, "allowed.txt"), "utf8"), "yes\n");
  // Pending while the user is asked; in_progress once allowed; then completed.
  const shown = wireEvents(fromLine).filter((e) => e.call === "bash-allow").map((e) => (e.kind === "permission" ? "?" : e.status)).filter(Boolean);
  assert.deepEqual(shown, ["pending", "?", "in_progress", "completed"]);
  const ups = toolUpdates(agent.client, "bash-allow");
  assert.equal(ups[0].kind, "execute");
  assert.equal(ups[0].title, "Run `echo yes > allowed.txt`");
  assert.equal(ups.at(-1).status, "completed");
});

test("permission deny", async () => {
  bashTurn("bash-deny", "echo no > denied.txt");
  agent.client.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "reject_once").optionId } });
  const fromLine = agent.lines.length;
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "run that" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.ok(!fs.existsSync(path.join(work, "denied.txt")), "a denied command ran");
  // Denied: from pending to failed, never running.
  const shown = wireEvents(fromLine).filter((e) => e.call === "bash-deny").map((e) => (e.kind === "permission" ? "?" : e.status)).filter(Boolean);
  assert.deepEqual(shown, ["pending", "?", "failed"]);
  assert.equal(toolUpdates(agent.client, "bash-deny").at(-1).status, "failed");
  assert.match(model.lastMessages().findLast((m) => m.role === "tool").content, /denied by the user/);
  agent.client.onPermission = null;
});

test("cancel mid-stream, then the next prompt works", async () => {
  model.respond = (body) =>
    /long story/.test(lastUserText(body)) ? { text: Array.from({ length: 200 }, (_, i) => `word${i} `), paceMs: 50 } : { text: ["short"] };
  const from = agent.client.updates.length;
  const pending = agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "tell a long story" }] });
  await agent.client.waitFor("streaming", () => agent.client.text(from).includes("word0"));
  const t0 = performance.now();
  await agent.conn.cancel({ sessionId });
  const r = await pending;
  timings.cancelToCancelled = Math.round(performance.now() - t0);
  assert.equal(r.stopReason, "cancelled");
  assert.ok(timings.cancelToCancelled < BOUND_MS, `cancelled after ${timings.cancelToCancelled} ms`);
  assert.ok(!agent.client.text(from).includes("word199"), "the stream was not cut");
  const after = agent.client.updates.length;
  const r2 = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "again" }] });
  assert.equal(r2.stopReason, "end_turn");
  assert.equal(agent.client.text(after), "short");
});

test("cancel while a permission request is pending: the tool does not run", async () => {
  bashTurn("bash-cancel", "echo ran > cancelled.txt");
  const pending = agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "run the thing" }] });
  await agent.client.waitFor("the permission request", () => agent.client.pending.length > 0);
  const t0 = performance.now();
  await agent.conn.cancel({ sessionId });
  agent.client.cancelPending();
  const r = await pending;
  const answeredAt = performance.now();
  timings.cancelPermissionToCancelled = Math.round(answeredAt - t0);
  assert.equal(r.stopReason, "cancelled");
  assert.ok(!fs.existsSync(path.join(work, "cancelled.txt")), "the tool ran after the cancel");
  const last = agent.client.updates.filter((u) => u.update.toolCallId === "bash-cancel").at(-1);
  assert.equal(last.update.status, "failed");
  assert.ok(last.at <= answeredAt, "the final tool_call_update came after the response");
});

/** The raw result of the agent's answer to a request whose result names sessionId (the SDK may drop unstable fields). */
function rawResult(pred) {
  for (const line of agent.lines) {
    const m = JSON.parse(line);
    if (m.result && pred(m.result)) return m.result;
  }
  return undefined;
}

test("while one session waits for a command's approval, another session of the folder edits and commits; then the first runs", async () => {
  const lockFile = path.join(work, "lock-b.txt");
  fs.writeFileSync(lockFile, "bee\n");
  git("add", "lock-b.txt");
  git("commit", "-qm", "lock-b.txt");
  const a = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const b = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  model.respond = (body) => {
    const prompt = body.messages.find((m) => m.role === "user" && !m.content.startsWith("<"))?.content ?? "";
    const last = body.messages.at(-1);
    if (last.role === "user" && /run the slow approval/.test(lastUserText(body)))
      return { toolCalls: [{ id: "lock-bash", name: "bash", arguments: JSON.stringify({ command: "echo from-a > lock-a.txt" }) }] };
    if (last.role === "user" && /edit lock-b/.test(lastUserText(body)))
      return { toolCalls: [{ id: "lock-read", name: "read_file", arguments: JSON.stringify({ path: "lock-b.txt" }) }] };
    if (last.role === "tool" && last.tool_call_id === "lock-read")
      return { toolCalls: [{ id: "lock-edit", name: "edit_file", arguments: JSON.stringify({ path: "lock-b.txt", old_string: "bee", new_string: "BEE" }) }] };
    return { text: [`done ${prompt.length}`] };
  };
  agent.client.onPermission = null;
  const waiting = agent.conn.prompt({ sessionId: a.sessionId, prompt: [{ type: "text", text: "run the slow approval" }] });
  await agent.client.waitFor("A's permission request", () => agent.client.pending.length > 0);
  const head = git("rev-parse", "HEAD").trim();
  let timer;
  const rb = await Promise.race([
    agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "edit lock-b.txt" }] }),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("B's turn did not end while A waited for approval")), WAIT_MS))),
  ]).catch((e) => {
    // Unblock A, so that the suite goes on, and fail.
    for (const resolve of agent.client.pending.splice(0)) resolve({ outcome: { outcome: "selected", optionId: "reject_once" } });
    throw e;
  }).finally(() => clearTimeout(timer));
  assert.equal(rb.stopReason, "end_turn");
  assert.notEqual(git("rev-parse", "HEAD").trim(), head, "B's edit was not committed while A waited");
  assert.equal(git("show", "HEAD:lock-b.txt"), "BEE\n");
  assert.ok(!fs.existsSync(path.join(work, "lock-a.txt")), "A's command ran before it was allowed");
  for (const resolve of agent.client.pending.splice(0)) resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
  const ra = await waiting;
  assert.equal(ra.stopReason, "end_turn");
  assert.equal(fs.readFileSync(path.join(work, "lock-a.txt"), "utf8"), "from-a\n");
});

test("models: session/new advertises the server's models; set_config_option and set_model switch one session's model, and its requests use it", async () => {
  const a = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const b = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const option = a.configOptions?.find((o) => o.id === "model");
  assert.ok(option, `no model config option: ${JSON.stringify(a.configOptions)}`);
  assert.equal(option.category, "model");
  assert.equal(option.currentValue, "scripted");
  assert.deepEqual(option.options.map((o) => o.value), ["scripted", "scripted-large"]);
  const raw = rawResult((r) => r.sessionId === a.sessionId);
  assert.equal(raw.models.currentModelId, "scripted");
  assert.deepEqual(raw.models.availableModels.map((m) => m.modelId), ["scripted", "scripted-large"]);

  // Stable: session/set_config_option.
  const set = await agent.conn.setSessionConfigOption({ sessionId: a.sessionId, configId: "model", value: "scripted-large" });
  assert.equal(set.configOptions.find((o) => o.id === "model").currentValue, "scripted-large");
  model.respond = () => ({ text: ["ok"] });
  await agent.conn.prompt({ sessionId: a.sessionId, prompt: [{ type: "text", text: "which model A" }] });
  assert.equal(model.requests.at(-1).model, "scripted-large");
  await agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "which model B" }] });
  assert.equal(model.requests.at(-1).model, "scripted", "the other session's model changed too");
  await assert.rejects(agent.conn.setSessionConfigOption({ sessionId: a.sessionId, configId: "mode", value: "x" }), (e) => e.code === -32602);

  // Unstable: session/set_model (Zed), sent raw: the SDK has no method for it.
  await agent.conn.request("session/set_model", { sessionId: b.sessionId, modelId: "scripted-large" });
  await agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "which model B again" }] });
  assert.equal(model.requests.at(-1).model, "scripted-large");
  const update = agent.client.updates.find((u) => u.sessionId === b.sessionId && u.update.sessionUpdate === "config_option_update");
  assert.equal(update?.update.configOptions.find((o) => o.id === "model").currentValue, "scripted-large");
  // Loaded again, the session says the model it uses.
  await agent.conn.loadSession({ sessionId: a.sessionId, cwd: work, mcpServers: [] });
  const loaded = rawResult((r) => r.models && r.sessionId === undefined && r.models.currentModelId === "scripted-large");
  assert.ok(loaded, "session/load does not advertise the switched model");
});

test("notices: the sandbox line once at a session's first prompt; a file changed on disk is told to the session that read it, not to the other", async () => {
  const watched = path.join(work, "watched.txt");
  fs.writeFileSync(watched, "before\n");
  const a = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const b = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (/read watched/.test(lastUserText(body)) && last.role === "user") return { toolCalls: [{ id: "watch-read", name: "read_file", arguments: JSON.stringify({ path: "watched.txt" }) }] };
    return { text: ["noted"] };
  };
  await agent.conn.prompt({ sessionId: a.sessionId, prompt: [{ type: "text", text: "read watched.txt" }] });
  await agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "hello" }] });
  await agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "hello again" }] });
  for (const s of [a, b]) {
    const sandbox = agent.client.notices(s.sessionId).filter((n) => n.kind === "sandbox");
    assert.equal(sandbox.length, 1, JSON.stringify(agent.client.notices(s.sessionId)));
    assert.match(sandbox[0].text, /^· sandbox: .*(network|no sandbox)/);
    assert.ok(sandbox[0].messageId && !agent.client.updates.some((u) => u.update.messageId === sandbox[0].messageId && !u.update._meta?.loom), "a notice shares its message with the answer");
  }
  fs.writeFileSync(watched, "changed behind the agent's back\n");
  const changed = (n) => /changed on disk since the agent read them.*watched\.txt/.test(n.text);
  await agent.client.waitFor("A told that watched.txt changed", () => agent.client.notices(a.sessionId).find(changed));
  await agent.conn.prompt({ sessionId: b.sessionId, prompt: [{ type: "text", text: "anything new?" }] });
  assert.ok(!agent.client.notices(b.sessionId).some(changed), "B was told of A's file");
});

// The four same-cwd checks (several threads on one project, as Zed,
// JetBrains, acpx and agent-shell open them): a second session/new while
// the first streams, the earlier session usable after the later one, a
// session/load while another streams, and both usable after.
const sameCwdModel = (body) => {
  const last = lastUserText(body);
  if (/stream slowly/.test(last)) return { text: Array.from({ length: 30 }, (_, i) => `slow${i} `), paceMs: 40 };
  return { text: [`answer to ${last}`] };
};

test("same cwd: session/new during a prompt starts another session and leaves the prompt running", async () => {
  model.respond = sameCwdModel;
  const from = agent.client.updates.length;
  const running = agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "stream slowly please" }] });
  await agent.client.waitFor("the first session streaming", () => agent.client.text(from).includes("slow0"));
  const other = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  assert.notEqual(other.sessionId, sessionId);
  const third = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  assert.notEqual(third.sessionId, other.sessionId, "two session/new with no prompt between gave the same id");
  const r = await running;
  assert.equal(r.stopReason, "end_turn");
  const own = agent.client.updates
    .slice(from)
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text)
    .join("");
  assert.ok(own.includes("slow29"), `the first session's answer was cut: ${own}`);
  globalThis.sameCwdOther = other.sessionId;
});

test("same cwd: the earlier session is usable after a later one, and both at once", async () => {
  const other = globalThis.sameCwdOther;
  const [a, b] = await Promise.all([
    agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "earlier session" }] }),
    agent.conn.prompt({ sessionId: other, prompt: [{ type: "text", text: "later session" }] }),
  ]);
  assert.equal(a.stopReason, "end_turn");
  assert.equal(b.stopReason, "end_turn");
  const textOf = (id) =>
    agent.client.updates
      .filter((u) => u.sessionId === id && u.update.sessionUpdate === "agent_message_chunk")
      .map((u) => u.update.content.text)
      .join("");
  assert.ok(textOf(sessionId).includes("answer to earlier session") && !textOf(sessionId).includes("answer to later session"));
  assert.ok(textOf(other).includes("answer to later session") && !textOf(other).includes("answer to earlier session"));
});

test("same cwd: session/load during a prompt leaves the prompt running; both usable after", async () => {
  const other = globalThis.sameCwdOther;
  const list = await agent.conn.listSessions({ cwd: work });
  assert.ok(list.sessions.some((x) => x.sessionId === other && x.title === "later session"), JSON.stringify(list.sessions));
  const from = agent.client.updates.length;
  const running = agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "stream slowly again" }] });
  await agent.client.waitFor("streaming", () => agent.client.text(from).includes("slow0"));
  await agent.conn.loadSession({ sessionId: other, cwd: work, mcpServers: [] });
  await agent.conn.resumeSession({ sessionId: other, cwd: work });
  const r = await running;
  assert.equal(r.stopReason, "end_turn");
  const [a, b] = await Promise.all([
    agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "first after load" }] }),
    agent.conn.prompt({ sessionId: other, prompt: [{ type: "text", text: "loaded after load" }] }),
  ]);
  assert.equal(a.stopReason, "end_turn");
  assert.equal(b.stopReason, "end_turn");
});

test("additionalDirectories: an extra root the model reads by absolute path and cannot write; session/list reports it; a relative one is refused", async () => {
  const shared = fs.realpathSync(fs.mkdtempSync(path.join(home, "shared-")));
  const readme = path.join(shared, "README");
  fs.writeFileSync(readme, "SHARED-ROOT text\n");
  await assert.rejects(
    agent.conn.newSession({ cwd: work, mcpServers: [], additionalDirectories: ["shared"] }),
    (e) => e.code === -32602 && /additionalDirectories/.test(e.message),
  );
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [], additionalDirectories: [shared] });
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool" && /SHARED-ROOT/.test(last.content)) {
      return { toolCalls: [{ id: "wr1", name: "write_file", arguments: JSON.stringify({ path: readme, content: "mine\n" }) }] };
    }
    if (last.role === "tool") return { text: ["Done."] };
    return { toolCalls: [{ id: "rd1", name: "read_file", arguments: JSON.stringify({ path: readme }) }] };
  };
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "read the shared README" }] });
  assert.equal(r.stopReason, "end_turn");
  const tools = model.lastMessages().filter((m) => m.role === "tool");
  assert.match(tools[0].content, /SHARED-ROOT text/);
  assert.match(tools[1].content, /outside the workspace root/);
  assert.equal(fs.readFileSync(readme, "utf8"), "SHARED-ROOT text\n");
  const system = model.lastMessages().find((m) => m.role === "system");
  assert.ok(system.content.includes(shared), "the model is not told of the extra root");
  const list = await agent.conn.listSessions({ cwd: work });
  const mine = list.sessions.find((x) => x.sessionId === s.sessionId);
  assert.deepEqual(mine.additionalDirectories, [shared]);
  assert.ok(list.sessions.every((x) => Array.isArray(x.additionalDirectories)), "a listed session without additionalDirectories");
});

test("malformed line and unknown method: the agent goes on, stdout is only JSON-RPC", async () => {
  agent.child.stdin.write("this is not json\n");
  agent.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: "raw-1", method: "no/such/method", params: {} }) + "\n");
  const answer = await agent.client.waitFor("the unknown method's answer", () =>
    agent.lines.map((l) => JSON.parse(l)).find((m) => m.id === "raw-1"),
  );
  assert.equal(answer.error.code, -32601);
  const list = await agent.conn.listSessions({ cwd: work });
  assert.ok(list.sessions.length >= 1);
  for (const line of agent.lines) {
    const m = JSON.parse(line);
    assert.equal(m.jsonrpc, "2.0", `not JSON-RPC on stdout: ${line}`);
  }
});

test("stdin EOF: the agent exits 0", async () => {
  const ended = await agent.closeStdin();
  timings.stdinEOFToExit = Math.round(ended.ms);
  assert.equal(ended.code, 0, agent.stderr);
  assert.ok(ended.ms < BOUND_MS, `exited after ${ended.ms} ms`);
});

test("session/list and session/load in a fresh process replay the history before the response", async () => {
  agent = new Agent();
  await agent.initialize();
  const list = await agent.conn.listSessions({ cwd: work });
  const info = list.sessions.find((s) => s.sessionId === sessionId);
  assert.ok(info, `session ${sessionId} not listed: ${JSON.stringify(list)}`);
  assert.equal(info.cwd, fs.realpathSync(work));
  assert.equal(info.title, firstPrompt);
  assert.ok(!Number.isNaN(Date.parse(info.updatedAt)));
  await agent.conn.loadSession({ sessionId, cwd: work, mcpServers: [] });
  // The journal's notice, raised while the history is replayed, comes after the replay, before the response.
  const resumed = agent.client.notices(sessionId).find((n) => /resumed the conversation/.test(n.text));
  assert.ok(resumed, "no 'resumed' notice");
  const lastReplayed = agent.client.updates.findLastIndex((u) => ["user_message_chunk", "tool_call", "tool_call_update"].includes(u.update.sessionUpdate) || (u.update.sessionUpdate === "agent_message_chunk" && !u.update._meta?.loom));
  assert.ok(resumed.index > lastReplayed, `a notice landed inside the replay (at ${resumed.index}, replay ends at ${lastReplayed})`);
  agent.client.updates = agent.client.updates.filter((u) => !u.update._meta?.loom);
  const replayed = agent.client.updates.map((u) => u.update);
  const kinds = new Set(replayed.map((u) => u.sessionUpdate));
  for (const k of ["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]) assert.ok(kinds.has(k), `no ${k} replayed before the response`);
  assert.equal(replayed[0].sessionUpdate, "user_message_chunk");
  assert.equal(replayed[0].content.text, firstPrompt);
  assert.ok(replayed.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "Hello from loom."));
  const read = replayed.filter((u) => u.toolCallId === "read1");
  assert.deepEqual(read.map((u) => u.sessionUpdate), ["tool_call", "tool_call_update"]);
  assert.equal(read[1].status, "completed");
  // The conversation goes on, with its history sent to the model.
  model.respond = () => ({ text: ["welcome back"] });
  const r = await agent.conn.prompt({ sessionId, prompt: [{ type: "text", text: "still there?" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.ok(model.lastMessages().some((m) => m.role === "user" && m.content === firstPrompt), "the model did not get the history");
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});

test("review: request_permission carries the diff before any write; /checkpoints and /rewind take the change back", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\nedits = "review"\n');
  agent = new Agent();
  await agent.initialize();
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  await agent.client.waitFor("the slash commands", () =>
    agent.client.updates.find((u) => u.update.sessionUpdate === "available_commands_update" && u.update.availableCommands.some((c) => c.name === "rewind")));
  const before = fs.readFileSync(notes, "utf8");
  const head = git("rev-parse", "HEAD").trim();
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool" && /applied/.test(last.content)) return { text: ["Done."] };
    if (last.role === "tool") return { toolCalls: [{ id: "rev-edit", name: "edit_file", arguments: JSON.stringify({ path: "notes.txt", old_string: "one", new_string: "ONE" }) }] };
    return { toolCalls: [{ id: "rev-read", name: "read_file", arguments: JSON.stringify({ path: "notes.txt" }) }] };
  };
  let writesAtPermission = -1;
  agent.client.onPermission = (p) => {
    writesAtPermission = agent.client.writes.length;
    return { outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId } };
  };
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "uppercase one" }] });
  assert.equal(r.stopReason, "end_turn");
  const p = agent.client.permissions.at(-1);
  assert.equal(p.toolCall.toolCallId, "rev-edit");
  const diff = p.toolCall.content.find((c) => c.type === "diff");
  assert.equal(diff.path, notes);
  assert.equal(diff.oldText, before);
  assert.equal(diff.newText, before.replace("one", "ONE"));
  assert.equal(writesAtPermission, 0, "written before the permission was answered");
  assert.equal(fs.readFileSync(notes, "utf8"), before.replace("one", "ONE"));
  assert.notEqual(git("rev-parse", "HEAD").trim(), head, "the accepted change is committed");
  agent.client.onPermission = null;

  const from = agent.client.updates.length;
  await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "/checkpoints" }] });
  const turn = agent.client.text(from).match(/turn (\d+): uppercase one/)?.[1];
  assert.ok(turn, agent.client.text(from));
  const from2 = agent.client.updates.length;
  const rw = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: `/rewind ${turn} files` }] });
  assert.equal(rw.stopReason, "end_turn");
  assert.match(agent.client.text(from2), /Rewound \(files\) to before turn \d+\. Restored: notes\.txt\./);
  assert.equal(fs.readFileSync(notes, "utf8"), before);
  assert.equal(git("log", "-1", "--format=%s").trim(), `loom: rewind to turn ${turn}`);
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});

test("review: a command's changes are a request_permission with each file's diff, Keep / Discard; Discard puts the file back", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "allow"\nedits = "review"\n');
  agent = new Agent();
  await agent.initialize();
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const before = fs.readFileSync(notes, "utf8");
  const head = git("rev-parse", "HEAD").trim();
  let toolResult = "";
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") {
      toolResult = last.content;
      return { text: ["Done."] };
    }
    return { toolCalls: [{ id: "gen-cmd", name: "bash", arguments: JSON.stringify({ command: "printf 'added by the command\\n' >> notes.txt" }) }] };
  };
  let diskAtPermission = null;
  agent.client.onPermission = (p) => {
    diskAtPermission = fs.readFileSync(notes, "utf8");
    return { outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "reject_once").optionId } };
  };
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "generate" }] });
  assert.equal(r.stopReason, "end_turn");
  const p = agent.client.permissions.at(-1);
  assert.equal(p.toolCall.toolCallId, "gen-cmd");
  assert.equal(p.toolCall.kind, "execute");
  assert.deepEqual(p.options.map((o) => o.name), ["Keep", "Discard"]);
  const diff = p.toolCall.content.find((c) => c.type === "diff");
  assert.equal(diff.path, notes);
  assert.equal(diff.oldText, before);
  assert.equal(diff.newText, before + "added by the command\n");
  assert.equal(diskAtPermission, before + "added by the command\n", "the command ran before it was asked");
  assert.equal(fs.readFileSync(notes, "utf8"), before, "Discard puts the file back");
  assert.equal(git("rev-parse", "HEAD").trim(), head, "nothing is committed");
  assert.match(toolResult, /the user discarded this command's changes to notes\.txt/);
  agent.client.onPermission = null;
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});

/** The agent's wire lines, parsed (what is not JSON left out). */
function wire() {
  return agent.lines.flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

test("available_commands_update comes after the response that names the session (session/new, session/load)", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n');
  agent = new Agent();
  await agent.initialize();
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  await agent.client.waitFor("the slash commands", () =>
    agent.client.updates.find((u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "available_commands_update"));
  let msgs = wire();
  const response = msgs.findIndex((m) => m.result?.sessionId === s.sessionId);
  const commands = msgs.findIndex((m) => m.params?.sessionId === s.sessionId && m.params?.update?.sessionUpdate === "available_commands_update");
  assert.ok(response >= 0 && commands > response, `session/new: response at line ${response}, commands at ${commands}`);
  model.respond = () => ({ text: ["hi"] });
  await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "hello" }] });
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);

  agent = new Agent();
  await agent.initialize();
  await agent.conn.loadSession({ sessionId: s.sessionId, cwd: work, mcpServers: [] });
  const atResponse = agent.client.updates.length;
  assert.ok(!agent.client.updates.some((u) => u.update.sessionUpdate === "available_commands_update"), "commands before session/load's response");
  await agent.client.waitFor("the slash commands after session/load", () =>
    agent.client.updates.slice(atResponse).find((u) => u.update.sessionUpdate === "available_commands_update"));
  msgs = wire();
  const loadResponse = msgs.findIndex((m) => m.id !== undefined && m.method === undefined && m.result !== undefined && msgs.indexOf(m) > 0 && !("agentCapabilities" in (m.result ?? {})));
  const loadCommands = msgs.findIndex((m) => m.params?.update?.sessionUpdate === "available_commands_update");
  assert.ok(loadResponse >= 0 && loadCommands > loadResponse, `session/load: response at line ${loadResponse}, commands at ${loadCommands}`);
  const ended2 = await agent.closeStdin();
  assert.equal(ended2.code, 0);
});

test("review: Accept on a new file writes it (the client's 'not found' read is not fatal); the call is pending while the review waits", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\nedits = "review"\n');
  agent = new Agent();
  await agent.initialize();
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const fresh = path.join(work, "fresh.txt");
  assert.ok(!fs.existsSync(fresh));
  let toolResult = "";
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") {
      toolResult = last.content;
      return { text: ["Created."] };
    }
    return { toolCalls: [{ id: "new-file", name: "write_file", arguments: JSON.stringify({ path: "fresh.txt", content: "fresh\n" }) }] };
  };
  agent.client.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId } });
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "create fresh.txt" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.equal(fs.readFileSync(fresh, "utf8"), "fresh\n", "the accepted new file was not written");
  assert.doesNotMatch(toolResult, /error|failed/i, `the model read: ${toolResult}`);
  assert.equal(toolUpdates(agent.client, "new-file").at(-1).status, "completed");
  assert.match(git("log", "-1", "--stat", "--format=%s"), /fresh\.txt/, "the accepted new file is committed");
  // In wire order: the call's last status before the permission request is pending.
  const msgs = wire();
  const asked = msgs.findIndex((m) => m.method === "session/request_permission" && m.params.toolCall.toolCallId === "new-file");
  const statuses = msgs.slice(0, asked).filter((m) => m.params?.update?.toolCallId === "new-file" && m.params.update.status).map((m) => m.params.update.status);
  assert.equal(statuses.at(-1), "pending", `statuses before the permission: ${statuses}`);
  agent.client.onPermission = null;
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});

test("modes and plan mode: set_mode plan, a refused write, plan updates, the plan as a permission request, accepted into agent mode; session_info_update and usage_update", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n');
  agent = new Agent();
  await agent.initialize();
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  assert.equal(s.modes.currentModeId, "agent");
  assert.deepEqual(s.modes.availableModes.map((m) => m.id), ["ask", "plan", "agent"]);
  assert.deepEqual(s.configOptions.map((o) => o.id), ["model", "mode", "effort"]);
  await agent.conn.setSessionMode({ sessionId: s.sessionId, modeId: "plan" });
  await agent.client.waitFor("current_mode_update plan", () =>
    agent.client.updates.find((u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "plan"));
  await assert.rejects(agent.conn.setSessionMode({ sessionId: s.sessionId, modeId: "yolo" }), (e) => e.code === -32602);
  const before = fs.readFileSync(notes, "utf8");
  const results = [];
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "tool") results.push(last.content);
    if (last.role === "tool" && /refused in plan mode/.test(last.content)) {
      return { toolCalls: [{ id: "plan1", name: "propose_plan", arguments: JSON.stringify({ plan: "1. append a line to notes.txt" }) }] };
    }
    if (last.role === "tool" && /accepted the plan/.test(last.content)) {
      return { toolCalls: [{ id: "todo2", name: "update_plan", arguments: JSON.stringify({ plan: [{ step: "read notes", status: "completed" }, { step: "append", status: "completed" }] }) }] };
    }
    if (last.role === "tool") return { text: ["Planned and done."] };
    return {
      toolCalls: [
        { id: "todo1", name: "update_plan", arguments: JSON.stringify({ plan: [{ step: "read notes", status: "in_progress" }, { step: "append", status: "pending" }] }) },
        { id: "w0", name: "write_file", arguments: JSON.stringify({ path: "notes.txt", content: "overwritten\n" }) },
      ],
    };
  };
  agent.client.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options[0].optionId } });
  const from = agent.client.updates.length;
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "plan a change to notes" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.equal(fs.readFileSync(notes, "utf8"), before, "nothing written in plan mode");
  assert.ok(results.some((t) => /write_file is refused in plan mode/.test(t)), "the model read why its write was refused");
  const asked = agent.client.permissions.at(-1);
  assert.equal(asked.toolCall.toolCallId, "plan1");
  assert.equal(asked.toolCall.kind, "switch_mode");
  assert.match(asked.toolCall.content[0].content.text, /append a line/);
  const mine = agent.client.updates.slice(from).filter((u) => u.sessionId === s.sessionId).map((u) => u.update);
  const plans = mine.filter((u) => u.sessionUpdate === "plan");
  assert.deepEqual(plans[0].entries.map((e) => [e.content, e.status]), [["read notes", "in_progress"], ["append", "pending"]]);
  assert.deepEqual(plans.at(-1).entries.map((e) => e.status), ["completed", "completed"]);
  assert.ok(mine.some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "agent"), "accepting the plan switches to agent mode");
  const info = mine.find((u) => u.sessionUpdate === "session_info_update");
  assert.equal(info?.title, "plan a change to notes");
  const usage = mine.filter((u) => u.sessionUpdate === "usage_update");
  assert.ok(usage.length > 0 && usage.every((u) => u.size > 0 && u.used > 0 && u.used <= u.size), JSON.stringify(usage));
  const opts = await agent.conn.setSessionConfigOption({ sessionId: s.sessionId, configId: "mode", value: "ask" });
  assert.equal(opts.configOptions.find((o) => o.id === "mode").currentValue, "ask");
  agent.client.onPermission = null;
});

test("session/delete: the session is closed, no longer listed nor loadable", async () => {
  const s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  model.respond = () => ({ text: ["kept for a moment"] });
  await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "to be deleted" }] });
  const listed = await agent.conn.listSessions({ cwd: work });
  assert.ok(listed.sessions.some((x) => x.sessionId === s.sessionId));
  assert.deepEqual(await agent.conn.deleteSession({ sessionId: s.sessionId }), {});
  const after = await agent.conn.listSessions({ cwd: work });
  assert.ok(!after.sessions.some((x) => x.sessionId === s.sessionId), "still listed after session/delete");
  await assert.rejects(agent.conn.loadSession({ sessionId: s.sessionId, cwd: work, mcpServers: [] }), (e) => e.code === -32602);
  await assert.rejects(agent.conn.deleteSession({ sessionId: s.sessionId }), (e) => e.code === -32602);
  const ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

test("an image prompt: refused for a model not known to take pictures; sent as an image_url part to one that does (model.images = on)", async () => {
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n');
  agent = new Agent();
  await agent.initialize();
  let s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  const sent = model.requests.length;
  await assert.rejects(
    agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "what is this?" }, { type: "image", data: PIXEL, mimeType: "image/png" }] }),
    (e) => e.code === -32602 && /not known to take pictures/.test(e.message) && /model\.images/.test(e.message),
  );
  assert.equal(model.requests.length, sent, "nothing was sent to the model");
  let ended = await agent.closeStdin();
  assert.equal(ended.code, 0);

  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n[model]\nimages = "on"\n');
  agent = new Agent();
  await agent.initialize();
  s = await agent.conn.newSession({ cwd: work, mcpServers: [] });
  model.respond = () => ({ text: ["A single pixel."] });
  const r = await agent.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: "text", text: "what is this?" }, { type: "image", data: PIXEL, mimeType: "image/png" }] });
  assert.equal(r.stopReason, "end_turn");
  const user = model.requests.at(-1).messages.filter((m) => m.role === "user").at(-1);
  assert.ok(Array.isArray(user.content), JSON.stringify(user));
  assert.deepEqual(user.content[0], { type: "text", text: "what is this?" });
  assert.equal(user.content[1].type, "image_url");
  assert.equal(user.content[1].image_url.url, "data:image/png;base64," + PIXEL);
  ended = await agent.closeStdin();
  assert.equal(ended.code, 0);
});
