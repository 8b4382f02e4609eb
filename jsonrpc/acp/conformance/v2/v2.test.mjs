// Conformance test of `loom-lsp acp` speaking ACP v2 (Preview), with the
// official ACP TypeScript SDK 2.4.0's experimental v2 client
// (@agentclientprotocol/sdk/experimental/v2: client() + ndJsonStream),
// which validates every message against the v2 schema, against the built
// binary over real stdio. The model is the scripted OpenAI-compatible
// server of the v1 conformance test (../model.mjs) on loopback.
//
// Run: LOOM_BIN=/path/to/loom-lsp node --test v2.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { ScriptedModel } from "../model.mjs";

const BIN = process.env.LOOM_BIN;
const WAIT_MS = 60000;

let model, baseURL, home, work, configFile;

/** A loom-lsp acp process with the SDK's v2 client on its stdio. */
class Agent extends EventEmitter {
  constructor() {
    super();
    this.child = spawn(BIN, ["acp", "--base-url", baseURL, "--model", "scripted", "--config", configFile, "--log", path.join(home, "acp.log")], {
      cwd: work,
      env: { ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, "state"), XDG_CONFIG_HOME: path.join(home, "config"), OPENAI_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.stderr = "";
    /** every line the agent wrote, in wire order (the SDK may hand updates over after a response) */
    this.wire = [];
    let partial = "";
    this.child.stdout.on("data", (c) => {
      partial += c;
      let i;
      while ((i = partial.indexOf("\n")) >= 0) {
        this.wire.push(JSON.parse(partial.slice(0, i)));
        this.emit("change");
        partial = partial.slice(i + 1);
      }
    });
    this.child.stderr.on("data", (c) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.child.on("exit", resolve));
    /** session/update params, in arrival order, as the SDK validated them */
    this.updates = [];
    /** answers a permission request: an optionId, or a Promise of one ("" = cancelled) */
    this.onPermission = () => "allow_once";
    this.permissions = [];
    const app = acp
      .client({ name: "loom-conformance-v2" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.emit("change");
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
        this.permissions.push(params);
        this.emit("change");
        const cancelled = new Promise((resolve) => signal.addEventListener("abort", () => resolve("")));
        const option = await Promise.race([this.onPermission(params), cancelled]);
        return option ? { outcome: { outcome: "selected", optionId: option } } : { outcome: { outcome: "cancelled" } };
      });
    const output = Writable.toWeb(this.child.stdin);
    const input = Readable.toWeb(this.child.stdout);
    this.conn = app.connect(acp.ndJsonStream(output, input));
    this.agent = this.conn.agent;
  }
  request(method, params) {
    return this.agent.request(method, params);
  }
  /** Resolves once pred() holds, checked on every change. */
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
        reject(new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(this.updates.map((u) => u.update))}\nstderr: ${this.stderr}`));
      }, WAIT_MS);
      this.on("change", check);
      check();
    });
  }
  /** The session/update params on the wire from line `from` on. */
  wireUpdates(from = 0) {
    return this.wire.slice(from).filter((m) => m.method === "session/update").map((m) => m.params);
  }
  /** The state_update states of session id on the wire from line `from` on. */
  states(id, from = 0) {
    return this.wireUpdates(from)
      .filter((u) => u.sessionId === id && u.update.sessionUpdate === "state_update")
      .map((u) => (u.update.stopReason ? `${u.update.state}:${u.update.stopReason}` : u.update.state));
  }
  idle(id, from) {
    return this.waitFor("idle", () => this.states(id, from).some((s) => s.startsWith("idle")));
  }
  /** Waits until the SDK validated and handed over every update on the wire. */
  allValidated() {
    return this.waitFor("every update validated by the SDK", () => this.updates.length === this.wireUpdates().length);
  }
  async stop() {
    this.child.stdin.end();
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 15000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}

function git(...args) {
  return execFileSync("git", ["-C", work, ...args], { encoding: "utf8" });
}

function lastUserText(body) {
  return body.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
}

let agent, sessionId;

before(async () => {
  assert.ok(BIN, "set LOOM_BIN to the loom-lsp binary");
  model = new ScriptedModel();
  baseURL = await model.start();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "acp-conformance-v2-"));
  work = path.join(home, "work");
  fs.mkdirSync(work);
  fs.mkdirSync(path.join(home, "config"));
  configFile = path.join(home, "loom.toml");
  fs.writeFileSync(configFile, '[tools]\nbash = "ask"\n');
  fs.writeFileSync(path.join(work, "notes.txt"), "alpha\n");
  git("init", "-q");
  git("config", "user.name", "conformance");
  git("config", "user.email", "conformance@loom-lsp.invalid");
  git("add", ".");
  git("commit", "-qm", "init");
  agent = new Agent();
});

after(async () => {
  if (agent) await agent.stop();
  await model.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

test("initialize negotiates v2", async () => {
  assert.equal(acp.PROTOCOL_VERSION, 2);
  const r = await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, info: { name: "loom-conformance-v2", version: "2.4.0" }, capabilities: {} });
  assert.equal(r.protocolVersion, 2);
  assert.equal(r.info.name, "loom-lsp");
  assert.ok(r.capabilities.session, "capabilities.session (the baseline session methods)");
  assert.ok(r.capabilities.session.prompt.image && r.capabilities.session.prompt.embeddedContext);
  assert.ok(r.capabilities.session.mcp.stdio && r.capabilities.session.mcp.http);
  assert.ok(!r.authMethods?.length, "no auth/login advertised");
});

test("session/new answers config options, no modes", async () => {
  const r = await agent.request("session/new", { cwd: work });
  assert.match(r.sessionId, /^loom-/);
  assert.ok(r.configOptions.some((o) => o.configId === "model"), "the model config option by configId");
  assert.equal(r.modes, undefined);
  sessionId = r.sessionId;
});

test("session/prompt is accepted at once; the turn reports through state_update", async () => {
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "user") return { text: ["Reading."], toolCalls: [{ id: "r1", name: "read_file", arguments: JSON.stringify({ path: "notes.txt" }) }] };
    if (last.tool_call_id === "r1") return { toolCalls: [{ id: "e1", name: "edit_file", arguments: JSON.stringify({ path: "notes.txt", old_string: "alpha", new_string: "beta" }) }] };
    if (last.tool_call_id === "e1") return { toolCalls: [{ id: "b1", name: "bash", arguments: JSON.stringify({ command: "echo ran > out.txt" }) }] };
    return { text: ["Done."] };
  };
  agent.onPermission = (p) => {
    assert.equal(p.subject.type, "tool_call");
    assert.ok(p.title.includes("echo ran"), p.title);
    return "allow_once";
  };
  const from = agent.wire.length;
  const r = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "edit and run" }] });
  assert.ok(r.messageId, "the inserted prompt's messageId");
  await agent.idle(sessionId, from);
  assert.deepEqual(agent.states(sessionId, from), ["running", "requires_action", "running", "idle:end_turn"]);
  await agent.allValidated();
  const ups = agent.wireUpdates(from).map((u) => u.update);
  const echo = ups.find((u) => u.sessionUpdate === "user_message");
  assert.equal(echo?.messageId, r.messageId);
  assert.equal(echo.content[0].text, "edit and run");
  assert.ok(!ups.some((u) => u.sessionUpdate === "tool_call"), "v2 has no tool_call: upserted tool_call_update");
  const diff = ups.flatMap((u) => (u.sessionUpdate === "tool_call_update" ? (u.content ?? []) : [])).find((c) => c.type === "diff");
  assert.equal(diff?.changes[0].operation, "modify");
  assert.match(diff.patch.text, /\+beta/);
  const text = ups.filter((u) => u.sessionUpdate === "agent_message_chunk" && !u._meta?.loom?.notice);
  assert.ok(text.every((u) => u.messageId), "every chunk has its messageId");
  assert.equal(text.map((u) => u.content.text).join(""), "Reading.Done.");
  assert.equal(fs.readFileSync(path.join(work, "notes.txt"), "utf8"), "beta\n");
  assert.equal(fs.readFileSync(path.join(work, "out.txt"), "utf8"), "ran\n");
});

test("session/cancel ends a turn waiting for the user: idle cancelled", async () => {
  model.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === "user") return { toolCalls: [{ id: "b2", name: "bash", arguments: JSON.stringify({ command: "echo no > never.txt" }) }] };
    return { text: ["after"] };
  };
  let asked;
  const waiting = new Promise((resolve) => (asked = resolve));
  agent.onPermission = () => {
    asked();
    return new Promise(() => {}); // the user never answers
  };
  const from = agent.wire.length;
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run something" }] });
  await waiting;
  await agent.agent.notify("session/cancel", { sessionId });
  await agent.idle(sessionId, from);
  const states = agent.states(sessionId, from);
  assert.equal(states.at(-1), "idle:cancelled");
  assert.ok(states.includes("requires_action"));
  assert.ok(!fs.existsSync(path.join(work, "never.txt")));
});

test("session/resume in a new process: replayFrom start replays, the state comes before the response", async () => {
  await agent.stop();
  agent = new Agent();
  await agent.request("initialize", { protocolVersion: 2, info: { name: "loom-conformance-v2", version: "2.4.0" } });
  await assert.rejects(
    agent.request("session/resume", { sessionId, cwd: work, replayFrom: { type: "_loom_unknown_cursor" } }),
    (e) => e.code === -32602,
  );
  const from = agent.wire.length;
  const r = await agent.request("session/resume", { sessionId, cwd: work, replayFrom: { type: "start" } });
  assert.ok(r.configOptions.some((o) => o.configId === "model"));
  // In wire order: what came before the response.
  const wire = agent.wire.slice(from);
  const ups = wire.slice(0, wire.findIndex((m) => m.result)).filter((m) => m.method === "session/update").map((m) => m.params.update);
  assert.deepEqual(ups.filter((u) => u.sessionUpdate === "state_update").map((u) => u.state), ["idle"]);
  const replayed = ups.filter((u) => u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk");
  assert.ok(replayed.every((u) => u.messageId));
  const text = replayed.map((u) => u.content.text ?? "").join("");
  assert.ok(text.includes("edit and run") && text.includes("Done."), text);
  // The conversation goes on.
  model.respond = (body) => ({ text: [`still here (${lastUserText(body)})`] });
  const f2 = agent.wire.length;
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "and now" }] });
  await agent.idle(sessionId, f2);
  assert.deepEqual(agent.states(sessionId, f2), ["running", "idle:end_turn"]);
  await agent.allValidated();
});
