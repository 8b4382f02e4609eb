package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/internal/goplstest"
)

const brokenGoMain = "package main\n\n// Pre-existing: not the edit's doing.\nvar _ = missing\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

// diagnosticsSession breaks main.go, and fixes it only once the language
// server's report reached the model in the edit's result: the script
// has no step for a result without it, so the turn fails without
// diagnostics.
const diagnosticsSession = `
[[step]]
match.last_user_contains = "shout"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"main.go"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"println(\"hi\")","new_string":"println(shout)"}'

[[step]]
match.last_tool_result_contains = "main.go:7:10: error: undefined: shout"
  [[step.tool_call]]
  id = "e2"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"println(shout)","new_string":"println(\"HI\")"}'

[[step]]
match.last_tool_result_contains = "no new problems in main.go"
text = ["Fixed: main.go builds again."]
`

// TestExecDiagnosticsAfterEdit: loom's own gopls (in the commands'
// sandbox) tells the model, in the same turn, that its edit broke the
// build, and not about the problem that was there before; the fix is
// followed by "no new problems".
func TestExecDiagnosticsAfterEdit(t *testing.T) {
	gopls := goplstest.Path(t)
	dir := gittest.Repo(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": brokenGoMain})
	env := isolatedEnv(t)
	var cfgHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgHome = v
		}
	}
	if err := os.MkdirAll(filepath.Join(cfgHome, "loom"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cfgHome, "loom"), "loom.toml", "[tools]\n# The bound is for a loaded CI machine and a cold gopls: the test is about\n# what the model hears, not how fast.\ndiagnostics_wait = \"90s\"\n\n[tools.language_servers.gopls]\ncommand = [\""+gopls+"\"]\nextensions = [\".go\"]\n")
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, diagnosticsSession), "shout")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	diags := ofType(events, "diagnostics")
	if len(diags) != 2 {
		t.Fatalf("want 2 diagnostics events, got %v\n%s", diags, r.stdout)
	}
	if diags[0]["summary"] != "1 new problem in main.go" || diags[1]["summary"] != "no new problems in main.go" {
		t.Errorf("summaries %q, %q", diags[0]["summary"], diags[1]["summary"])
	}
	for _, tc := range ofType(events, "tool_completed") {
		if out, _ := tc["output"].(string); strings.Contains(out, "undefined: missing") {
			t.Errorf("a pre-existing problem reached the model: %q", out)
		}
	}
	if m := ofType(events, "message_completed"); len(m) == 0 || m[len(m)-1]["text"] != "Fixed: main.go builds again." {
		t.Errorf("final message %v", m)
	}
}

// silentServerSession edits main.go, and answers only once the edit's
// result told the model that diagnostics were not available: the script
// has no step for a result that says nothing.
const silentServerSession = `
[[step]]
match.last_user_contains = "shout"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"main.go"}'
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"main.go","old_string":"println(\"hi\")","new_string":"println(shout)"}'

[[step]]
match.last_tool_result_contains = "diagnostics were not available for main.go (silent-ls is still starting)"
text = ["I cannot tell whether it builds."]
`

// TestExecDiagnosticsUnavailableAreSaid: a language server that never
// answers (a real process that reads and says nothing) costs the bounded
// wait, and the model reads that diagnostics were not available for the
// file it edited — not silence, which it would take for "no new
// problems".
func TestExecDiagnosticsUnavailableAreSaid(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
	env := isolatedEnv(t)
	var cfgHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgHome = v
		}
	}
	if err := os.MkdirAll(filepath.Join(cfgHome, "loom"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cfgHome, "loom"), "loom.toml", "[tools]\ndiagnostics_wait = \"1s\"\n\n[tools.language_servers.silent-ls]\ncommand = [\"sh\", \"-c\", \"cat >/dev/null; :\"]\nextensions = [\".go\"]\n")
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, silentServerSession), "shout")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	if diags := ofType(events, "diagnostics"); len(diags) != 1 || diags[0]["summary"] != "diagnostics not available for main.go" {
		t.Errorf("diagnostics events %v", diags)
	}
	if m := ofType(events, "message_completed"); len(m) == 0 || m[len(m)-1]["text"] != "I cannot tell whether it builds." {
		t.Errorf("final message %v\n%s", m, r.stdout)
	}
}
