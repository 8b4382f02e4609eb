package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Every subcommand, and the top level, answers --help/-h on stdout and
// --version/-V, with exit 0.
func TestCLIHelpAndVersionEverywhere(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"", "serve", "exec", "demo", "replay", "version", "acp", "worktrees"} {
		for _, flag := range []string{"--help", "-h", "--version", "-V"} {
			args := []string{flag}
			if sub != "" {
				args = []string{sub, flag}
			}
			r := runLoom(t, dir, "", args...)
			if r.code != 0 || r.stderr != "" {
				t.Errorf("loom-lsp %v: exit %d, stderr %q", args, r.code, r.stderr)
				continue
			}
			want := "Usage: loom-lsp"
			if strings.Contains(flag, "V") || strings.Contains(flag, "version") {
				want = "loom-lsp "
			}
			if !strings.HasPrefix(r.stdout, want) {
				t.Errorf("loom-lsp %v: stdout %q, want it to start with %q", args, r.stdout, want)
			}
			if n := strings.Count(r.stdout, "Flags:"); n > 1 {
				t.Errorf("loom-lsp %v: %d \"Flags:\" headings:\n%s", args, n, r.stdout)
			}
		}
	}
	if r := runLoom(t, dir, "", "help", "exec"); r.code != 0 || !strings.Contains(r.stdout, "--approve bash=allow") {
		t.Errorf("loom-lsp help exec: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// Flags may come after the prompt; after "--" everything is the prompt.
func TestExecFlagsAfterThePrompt(t *testing.T) {
	dir := testRepo(t)
	r := runLoom(t, dir, "", "exec", "greet the world", "--script", writeScript(t, editScript), "--output", "jsonl")
	if r.code != 0 || !strings.Contains(r.stdout, `"type":"turn_completed"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runLoom(t, dir, "", "exec", "--script", writeScript(t, editScript), "--", "--greet", "the world")
	if r.code != exitUsage || !strings.Contains(r.stderr, `got 2 (["--greet" "the world"])`) {
		t.Fatalf("two words after --: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runLoom(t, dir, "", "exec", "--script", writeScript(t, editScript), "--", "--greet the world")
	if r.code != 0 {
		t.Fatalf("a prompt starting with -- after --: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// The first refused command tells the user, once and plainly, how to
// allow commands.
func TestExecBashRefusalSaysHowToAllow(t *testing.T) {
	dir := testRepo(t)
	script := writeScript(t, `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo one"}'
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo two"}'

[[step]]
match.last_tool_result_contains = "not run"
text = ["I could not run it."]
`)
	r := runLoom(t, dir, "", "exec", "--script", script, "run it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "--approve bash=allow"); n != 1 {
		t.Fatalf("the hint appears %d times, want once:\n%s", n, r.stderr)
	}
	// Each refused command is reported once, in exec's words.
	for _, c := range []string{"echo one", "echo two"} {
		if n := strings.Count(r.stderr, c); n > 2 { // its call line and its refusal line
			t.Errorf("%q appears %d times:\n%s", c, n, r.stderr)
		}
	}
	for _, bad := range []string{"this editor", "\nerror:"} {
		if strings.Contains("\n"+r.stderr, bad) {
			t.Errorf("the refusal says %q:\n%s", bad, r.stderr)
		}
	}
}

// A default run in a folder with a conversation says nothing about the
// earlier one; a warning is printed once.
func TestExecOneMessageEach(t *testing.T) {
	dir, env := testRepo(t), isolatedEnv(t)
	script := writeScript(t, editScript)
	for i := 0; i < 2; i++ {
		r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "greet")
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\nstderr:\n%s", i, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "resumed") || strings.Contains(r.stderr, "new conversation") {
			t.Fatalf("run %d talks about the earlier conversation:\n%s", i, r.stderr)
		}
		gitT(t, dir, "reset", "-q", "--hard", "HEAD~1")
	}
	// Another process holds the folder's journal: this run journals a
	// conversation of its own, and has nothing to say about the other.
	locks, _ := filepath.Glob(filepath.Join(envValue(env, "XDG_STATE_HOME"), "loom", "*.jsonl.lock"))
	if len(locks) != 1 {
		t.Fatalf("journal locks %v", locks)
	}
	f, err := os.OpenFile(locks[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK} // a record lock, as the daemon takes
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "greet")
	if r.code != 0 || strings.Contains(r.stderr, "another loom") || strings.Contains(r.stderr, "journal") {
		t.Fatalf("exit %d; want a quiet run:\n%s", r.code, r.stderr)
	}
	journals, _ := filepath.Glob(filepath.Join(envValue(env, "XDG_STATE_HOME"), "loom", "*.jsonl"))
	if len(journals) < 2 {
		t.Fatalf("journals %v: want the locked one and this run's own", journals)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
