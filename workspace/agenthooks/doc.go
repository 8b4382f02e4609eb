// Package agenthooks runs the agent hooks of the field's formats, read
// unchanged from the files teams already have: Claude Code's ("hooks" in
// .claude/settings.json, .claude/settings.local.json and
// ~/.claude/settings.json), Codex's (.codex/hooks.json, [hooks] in
// .codex/config.toml, and the same under ~/.codex), VS Code's and GitHub
// Copilot's (.github/hooks/*.json, either VS Code's PascalCase events or
// the Copilot CLI's camelCase ones with their bash and timeoutSec keys),
// and loom's own (.loom/hooks.json in the folder, hooks.json in the
// user's loom configuration directory; Claude Code's format). loom.toml's
// [hooks] table is the git auto-commit's and stays so.
//
// The package loads and matches hooks ([Load], [Set.For]), runs one with
// the JSON input its format defines on stdin ([Run]: in the sandbox
// commands run in, with a timeout, bounded output, the process group and
// its escapees reaped, no API key in its environment) and reads what it
// said ([Outcome]: exit code 2 and the JSON outputs, per format). It also
// binds a repository's hooks to their content ([Fingerprint], [TrustFile]):
// the definition and the repository files the command names, so that a
// hook script the agent rewrote is a changed hook, held back until the
// user trusts the folder again.
//
// What a hook decided enters the conversation elsewhere, as an event of
// the agent's state machine (fsm.HooksDecided): this package never
// touches a conversation, and never imports package workspace.
package agenthooks
