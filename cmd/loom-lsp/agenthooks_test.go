package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// guardScript blocks rm -rf, as teams write it for Claude Code: the
// reason goes to stderr, exit code 2.
const guardScript = `#!/bin/bash
input=$(cat)
case "$input" in *'rm -rf'*) echo "rm -rf is not allowed here; delete files one by one" >&2; exit 2;; esac
exit 0
`

// rmScript asks for rm -rf build; the next step answers whichever way the
// command went.
const rmScript = `
[[step]]
match.last_role = "user"
text = ["Cleaning."]
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
match.last_tool_result_contains = "exit code"
text = ["Removed."]
`

// The same rm -rf guard in each format teams have.
var guardFormats = map[string]map[string]string{
	"claude": {".claude/settings.json": `{
  "permissions": {"allow": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh", "timeout": 10}]}
    ]
  }
}`},
	"codex-json": {".codex/hooks.json": `{"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "bash .claude/hooks/guard.sh", "timeout": 10}]}]}}`},
	"codex-toml": {".codex/config.toml": "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \".claude/hooks/guard.sh\"\ntimeout = 10\n"},
	"vscode":     {".github/hooks/guard.json": `{"hooks": {"PreToolUse": [{"type": "command", "command": "./.claude/hooks/guard.sh", "timeout": 10}]}}`},
	"copilot":    {".github/hooks/guard.json": `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./.claude/hooks/guard.sh", "cwd": ".", "timeoutSec": 10}]}}`},
}

// hookRepo is a git repository with a build directory and the guard in
// the files given; home is a home of its own.
func hookRepo(t *testing.T, files map[string]string) (dir string, env []string) {
	t.Helper()
	all := map[string]string{"build/out.o": "x", ".claude/hooks/guard.sh": guardScript}
	for k, v := range files {
		all[k] = v
	}
	dir = gittest.Repo(t, all)
	os.Chmod(filepath.Join(dir, ".claude/hooks/guard.sh"), 0o755)
	home := t.TempDir()
	return dir, append(isolatedEnv(t), "HOME="+home)
}

// jsonlEvents parses exec's JSONL output.
func jsonlEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		evs = append(evs, ev)
	}
	return evs
}

// hookEvents are the JSONL hook events' hook objects.
func hookEvents(evs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["type"] == "hook" {
			out = append(out, ev["hook"].(map[string]any))
		}
	}
	return out
}

// TestExecHookBlocksRmRfInEachFormat: the same PreToolUse guard, in each
// format, keeps rm -rf from running; the model reads the reason; the
// JSONL hook event says so.
func TestExecHookBlocksRmRfInEachFormat(t *testing.T) {
	for name, files := range guardFormats {
		t.Run(name, func(t *testing.T) {
			dir, env := hookRepo(t, files)
			if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 || !strings.Contains(r.stdout, "1 agent hook") {
				t.Fatalf("trust: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--approve", "bash=allow", "--script", writeScript(t, rmScript), "clean up")
			if _, err := os.Stat(filepath.Join(dir, "build/out.o")); err != nil {
				t.Fatalf("rm -rf ran:\n%s\n%s", r.stdout, r.stderr)
			}
			evs := jsonlEvents(t, r.stdout)
			hooks := hookEvents(evs)
			if len(hooks) != 1 || hooks[0]["decision"] != "deny" || hooks[0]["event"] != "PreToolUse" || !strings.Contains(hooks[0]["reason"].(string), "rm -rf is not allowed") {
				t.Fatalf("hook events %v\n%s", hooks, r.stdout)
			}
			if !strings.Contains(r.stdout, "Blocked by the hook.") || r.code != 0 {
				t.Fatalf("the model did not read the reason (exit %d):\n%s\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestExecRepositoryHooksRunOnlyAsTrusted: an untrusted folder's hooks
// are named and not run; after loom-lsp trust they run; a change to the
// script they run holds them back again.
func TestExecRepositoryHooksRunOnlyAsTrusted(t *testing.T) {
	dir, env := hookRepo(t, guardFormats["claude"])
	exec := func() execRun {
		gittest.Run(t, dir, "checkout", "--", "build")
		return runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--script", writeScript(t, rmScript), "clean up")
	}
	r := exec()
	out := r.stdout + r.stderr
	if !strings.Contains(out, "settings.json:5 PreToolUse") || !strings.Contains(out, "the folder is not trusted") || !strings.Contains(out, "Removed.") {
		t.Fatalf("untrusted:\n%s", out)
	}
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := exec(); !strings.Contains(r.stdout, "Blocked by the hook.") {
		t.Fatalf("trusted:\n%s%s", r.stdout, r.stderr)
	}
	// The agent (or a pull) rewrites the script: held back until trusted
	// again.
	os.WriteFile(filepath.Join(dir, ".claude/hooks/guard.sh"), []byte("#!/bin/bash\nexit 0\n"), 0o755)
	r = exec()
	out = r.stdout + r.stderr
	if !strings.Contains(out, "changed since you trusted the folder") || !strings.Contains(out, "Removed.") {
		t.Fatalf("changed:\n%s", out)
	}
}

// TestExecHookEvents: a prompt hook adds context the model reads, a
// post-edit formatter rewrites the edited file, a Stop hook keeps the
// turn going once, and a hook that hangs is killed and the turn goes on.
func TestExecHookEvents(t *testing.T) {
	settings := `{"hooks": {
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'House rule: greet the world.'"}]}],
  "PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}],
  "PostToolUse": [{"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "./fmt.sh"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}]
}}`
	fmtScript := `#!/bin/bash
f=$(sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p')
tr a-z A-Z < "$f" > "$f.tmp" && mv "$f.tmp" "$f"
echo "{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"formatted $(basename "$f")\"}}"
`
	stopScript := `#!/bin/bash
case "$(cat)" in *'"stop_hook_active":false'*) echo "run the tests before stopping" >&2; exit 2;; esac
exit 0
`
	script := `
[[step]]
match.last_user_contains = "House rule: greet the world."
text = ["Reading."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}'

[[step]]
match.last_tool_result_contains = "formatted greet.txt"
text = ["Edited."]

[[step]]
match.last_user_contains = "run the tests before stopping"
text = ["Tests pass."]
`
	dir := gittest.Repo(t, map[string]string{"greet.txt": "hello\n", ".claude/settings.json": settings, "fmt.sh": fmtScript, "stop.sh": stopScript})
	os.Chmod(filepath.Join(dir, "fmt.sh"), 0o755)
	os.Chmod(filepath.Join(dir, "stop.sh"), 0o755)
	env := append(isolatedEnv(t), "HOME="+t.TempDir())
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, script), "greet")
	evs := jsonlEvents(t, r.stdout)
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "HELLO, WORLD\n" {
		t.Errorf("the formatter did not run on the edit: %q", got)
	}
	byEvent := map[string]map[string]any{}
	for _, h := range hookEvents(evs) {
		byEvent[h["event"].(string)] = h
	}
	if h := byEvent["PreToolUse"]; h == nil || !strings.Contains(h["problem"].(string), "timed out after 1s") {
		t.Errorf("the hung hook: %v", h)
	}
	if h := byEvent["PostToolUse"]; h == nil || h["context"] != "formatted greet.txt" {
		t.Errorf("the formatter's report: %v", h)
	}
	if h := byEvent["Stop"]; h == nil {
		t.Errorf("no Stop hook event")
	}
	if !strings.Contains(r.stdout, "Tests pass.") || r.code != 0 {
		t.Fatalf("the turn (exit %d):\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Edited.") {
		t.Errorf("the model was not told of the formatter")
	}
}

// TestExecHookCannotWriteHome: a hook runs in the commands' sandbox: its
// write into $HOME fails, and the turn goes on.
func TestExecHookCannotWriteHome(t *testing.T) {
	base := t.TempDir()
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(tmp, 0o755)
	settings := `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo pwned > \"$HOME/pwned\""}]}]}}`
	dir := gittest.Repo(t, map[string]string{".claude/settings.json": settings})
	if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	env := append(isolatedEnv(t), "HOME="+home, "TMPDIR="+tmp)
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--script", writeScript(t, "[[step]]\ntext = [\"Hi.\"]\n"), "hello")
	if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
		t.Fatalf("the hook wrote into $HOME:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "failed (exit code 1)") || !strings.Contains(r.stdout, "Hi.") {
		t.Fatalf("output:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestReplayShowsHookDecisionsWithoutRunningHooks: the journal keeps what
// the hooks said; replaying it gives the same actions (the blocked call,
// the hook's report) and runs no hook.
func TestReplayShowsHookDecisionsWithoutRunningHooks(t *testing.T) {
	counting := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ran >> \"$CLAUDE_PROJECT_DIR/build/count\"; ./.claude/hooks/guard.sh"}]}]}}`
	dir, env := hookRepo(t, map[string]string{".claude/settings.json": counting})
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--script", writeScript(t, rmScript), "clean up")
	if !strings.Contains(r.stdout, "Blocked by the hook.") {
		t.Fatalf("%s%s", r.stdout, r.stderr)
	}
	journals, _ := filepath.Glob(filepath.Join(envValue(env, "XDG_STATE_HOME"), "loom", "*", "*.jsonl"))
	if len(journals) == 0 {
		journals, _ = filepath.Glob(filepath.Join(envValue(env, "XDG_STATE_HOME"), "loom", "*.jsonl"))
	}
	if len(journals) != 1 {
		t.Fatalf("journals: %v", journals)
	}
	count := func() string { b, _ := os.ReadFile(filepath.Join(dir, "build/count")); return string(b) }
	before := count()
	var outs []string
	for range 2 {
		rr := runLoomEnv(t, env, dir, "", "replay", journals[0])
		if rr.code != 0 {
			t.Fatal(rr.stderr)
		}
		outs = append(outs, rr.stdout)
	}
	if count() != before || before != "ran\n" {
		t.Fatalf("a hook ran again on replay: %q then %q", before, count())
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], `HooksDecided turn=1 event=PreToolUse call=b1`) ||
		!strings.Contains(outs[0], `DisplayToolCall turn=1 call=b1 name=bash status=failed "tool error: blocked by a PreToolUse hook`) {
		t.Fatalf("replay:\n%s", outs[0])
	}
}
