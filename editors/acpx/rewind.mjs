// A rewind over ACP driven by acpx's own ACP client (AcpClient, the class
// behind every acpx command): acpx has no command for session/rewind or
// session/edit_prompt, so after acpx's session/new and session/prompt the
// draft's request goes out on the same connection through the client's
// ACP SDK connection (connection.agent.request, the SDK's way to send any
// method), as a user of acpx's library would. Prints the transcript (the
// wire as acpx recorded it) and exits non-zero when a check fails.
//
//   node rewind.mjs LOOM_LSP PROJ TRANSCRIPT
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [bin, proj, out] = process.argv.slice(2);
const dist = join(dirname(fileURLToPath(import.meta.url)), "node_modules/acpx/dist");
let AcpClient;
for (const f of readdirSync(dist).filter((f) => /^queue-owner-runtime-.*\.js$/.test(f))) {
	const mod = await import(join(dist, f));
	AcpClient = Object.values(mod).find((v) => typeof v === "function" && v.prototype?.createSession && v.prototype?.prompt);
	if (AcpClient) break;
}
if (!AcpClient) throw new Error(`acpx's AcpClient not found in ${dist}`);

const lines = [];
const short = (v) => {
	const s = JSON.stringify(v);
	return s.length > 160 ? s.slice(0, 157) + "..." : s;
};
const record = (direction, m) => {
	const arrow = direction === "outbound" ? "->" : "<-";
	if (m.method === "session/update") {
		const u = m.params.update;
		const what = u.content?.text ?? u.title ?? u.status ?? "";
		lines.push(`${arrow} session/update ${u.sessionUpdate}${what ? " " + short(what) : ""}`);
	} else if (m.method) {
		lines.push(`${arrow} ${m.method} ${short(m.params ?? {})}`);
	} else {
		lines.push(`${arrow} (${m.id}) ${m.error ? "error " + short(m.error) : short(m.result)}`);
	}
};
const client = new AcpClient({
	agentCommand: `${bin} acp`,
	cwd: proj,
	permissionMode: "approve-all",
	onAcpMessage: record,
});
const list = () => readFileSync(join(proj, "list.txt"), "utf8");
const fails = [];
const check = (ok, what) => {
	lines.push(`-- ${ok ? "ok" : "FAIL"}: ${what}`);
	if (!ok) fails.push(what);
};
try {
	await client.start();
	const { sessionId } = await client.createSession(proj);
	lines.push("-- acpx prompt: capitalise");
	const first = await client.prompt(sessionId, "capitalise the list");
	check(list().startsWith("ONE\n"), "the agent's edit is on disk");
	lines.push("-- the user edits list.txt's last line on disk");
	writeFileSync(join(proj, "list.txt"), list().replace("ten\n", "ten (mine)\n"));
	const messageId = first.userMessageId;
	check(typeof messageId === "string", `the prompt's message id: ${messageId}`);
	lines.push("-- raw: session/rewind to the prompt's message id");
	const rewind = await client.getConnection().agent.request("session/rewind", { sessionId, toMessageId: messageId }).then(
		(r) => ({ r }),
		(e) => ({ e }),
	);
	check(rewind.e?.code === -32602, "rewind to a prompt is refused (loom rewinds whole turns: edit_prompt)");
	lines.push("-- raw: session/edit_prompt on that message");
	const edited = await client.getConnection().agent.request("session/edit_prompt", {
		sessionId,
		messageId,
		newContent: [{ type: "text", text: "greet" }],
	});
	const now = list();
	check(edited.stopReason === "end_turn", "the edited prompt ran");
	check(now.startsWith("one\n"), "the agent's change taken back");
	check(now.includes("ten (mine)\n"), "the user's edit kept on disk");
} catch (e) {
	fails.push(String(e?.stack ?? e));
} finally {
	await client.close().catch(() => {});
}
writeFileSync(out, lines.join("\n") + "\n");
if (fails.length) {
	console.error(fails.join("\n"));
	process.exit(1);
}
