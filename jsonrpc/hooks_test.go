package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// hookGuard blocks rm -rf the way teams write it for Claude Code.
const hookGuard = `#!/bin/bash
case "$(cat)" in *'rm -rf'*) echo "rm -rf is not allowed here" >&2; exit 2;; esac
`

const hookSettings = `{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    ],
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "echo 'Team rule: never delete build outputs.'"}]}
    ]
  }
}`

const hookModel = `
[[step]]
match.last_user_contains = "Team rule: never delete build outputs."
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"rm -rf build"}'

[[step]]
match.last_tool_result_contains = "rm -rf is not allowed here"
# slow enough that a call the hook blocked would have run meanwhile
delay = "500ms"
text = ["Blocked by the hook."]

[[step]]
match.last_role = "user"
text = ["No rule seen."]
`

// TestHooksThroughLSP: a repository's Claude Code hooks, unchanged, in an
// LSP client: named and not run while the folder is untrusted; after
// loom.trust the prompt hook adds context and the PreToolUse hook blocks
// rm -rf (the command does not run; the model reads the reason); each
// hook is a loom/hook notification the panel shows as a line.
func TestHooksThroughLSP(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	for name, text := range map[string]string{".claude/settings.json": hookSettings, "guard.sh": hookGuard, "build/out.o": "x"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Folders: []string{dir}}, script: hookModel})
	e.await("the held hooks notice", hasMethod("loom/notice", "the folder is not trusted"))
	for _, m := range e.ed.Messages(MethodNotice) {
		if strings.Contains(string(m.Params), "not trusted") && !strings.Contains(string(m.Params), "settings.json:4 PreToolUse: ./guard.sh: held back") {
			t.Errorf("the notice does not name the hook: %s", m.Params)
		}
	}
	if st := e.status(); len(st.Hooks) != 2 || st.Hooks[0].Held != "the folder is not trusted" {
		t.Errorf("loom.status hooks: %+v", st.Hooks)
	}
	var res TrustResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdTrust, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.trust: %v", err)
	}
	e.statusUntil("the hooks run after loom.trust", func(st workspace.Status) bool { return len(st.Hooks) == 2 && st.Hooks[0].Held == "" })
	from := len(e.ed.Messages(""))
	turn := e.ask("clean up").Turn
	e.await("the turn", turnEnded(e.folder, from))
	if _, err := os.Stat(filepath.Join(dir, "build/out.o")); err != nil {
		t.Fatal("rm -rf ran")
	}
	if got := displayed(t, e.ed.Messages("")[from:], e.folder, turn); !strings.Contains(got, "Blocked by the hook.") {
		t.Fatalf("the model did not read the reason: %q", got)
	}
	var hooks []HookParams
	for _, m := range e.ed.Messages(MethodHook)[0:] {
		var p HookParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, p)
	}
	if len(hooks) != 2 {
		t.Fatalf("loom/hook notifications: %+v", hooks)
	}
	if h := hooks[0]; h.Hook.Event != "UserPromptSubmit" || h.Hook.Context == "" || !strings.HasSuffix(h.Text, "ran (added context)") {
		t.Errorf("the prompt hook: %+v %s", h.Hook, h.Text)
	}
	if h := hooks[1]; h.Hook.Event != "PreToolUse" || h.Hook.Decision != "deny" || h.Hook.CallID != "b1" ||
		!strings.Contains(h.Text, "PreToolUse: ./guard.sh: deny: rm -rf is not allowed here") || h.Turn != turn {
		t.Errorf("the guard: %+v %s", h.Hook, h.Text)
	}
	// A hook added to the file (a git pull): seen at once, held back
	// until trusted again; the others still run.
	added := strings.Replace(hookSettings, `"PreToolUse": [`, `"Stop": [{"hooks": [{"type": "command", "command": "./more.sh"}]}],
    "PreToolUse": [`, 1)
	if err := os.WriteFile(filepath.Join(dir, ".claude/settings.json"), []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	e.await("the added hook held back", hasMethod("loom/notice", "Stop: ./more.sh: held back: added or changed since you trusted the folder"))
}
