package workspace

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestLoomsGitRunsNoFilterOfARepositoryTheAgentMadeInASubmodule: a
// submodule whose directory is missing from the worktree (the user
// removed it; the gitlink stays in the index) was a place the sandbox
// could not keep read-only, so a sandboxed command made a repository
// there, with a clean filter in its own .git/config and a file whose
// stat changed. loom's own git status (before the next command, to know
// what it changes) then recursed into the submodule and ran the filter
// with the user's rights, outside the sandbox: it wrote into $HOME (and
// so would the user's own git status). The sandbox now makes the
// directory again and keeps it read-only, and loom's git does not look
// inside submodules' worktrees.
func TestLoomsGitRunsNoFilterOfARepositoryTheAgentMadeInASubmodule(t *testing.T) {
	if !sandbox.New(sandbox.Policy{Root: "/"}).Active() {
		t.Skip("no Landlock here")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(tmp, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	inner := gitRepo(t, map[string]string{"inner.txt": "inner\n"})
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", inner, "sub")
	runGit(t, dir, "commit", "-q", "-m", "add sub")
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(home, "pwned")
	plant := `mkdir -p sub && cd sub && git init -q && echo hi > f && git add f && ` +
		`git config filter.x.clean "sh -c 'echo pwned > ` + pwned + `; cat'" && echo '* filter=x' > .gitattributes && ` +
		`touch -d 2020-01-01 f && echo planted`
	// One session plants; the next one (loom restarted) runs a command,
	// before which loom asks git what is dirty.
	turn := func(command string) {
		t.Helper()
		model := scriptModel([]fsm.ToolCall{call("b", "bash", jsonArgs(t, map[string]string{"command": command}))})
		h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
		defer h.Close()
		s, err := h.AddFolder(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Ask(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		h.editor.turnEnded(t, 1)
	}
	// The sandbox makes the missing directory again and keeps it
	// read-only: the plant fails.
	turn(plant)
	if _, err := os.Stat(filepath.Join(dir, "sub", ".git", "config")); err == nil {
		t.Fatal("a sandboxed command made a repository where the submodule's directory was missing")
	}
	if st, err := os.Lstat(filepath.Join(dir, "sub")); err != nil || !st.IsDir() {
		t.Fatalf("the submodule's directory was not made again: %v", err)
	}
	if b, err := os.ReadFile(pwned); err == nil {
		t.Fatalf("$HOME/pwned = %q", b)
	}
	// Planted anyway (a command the user let run outside the sandbox, a
	// machine without Landlock): loom's own git still runs nothing of it.
	os.Remove(filepath.Join(dir, "sub"))
	plantCmd := exec.Command("sh", "-c", plant)
	plantCmd.Dir = dir
	if out, err := plantCmd.CombinedOutput(); err != nil {
		t.Fatalf("plant: %v %s", err, out)
	}
	turn("echo next")
	if b, err := os.ReadFile(pwned); err == nil {
		t.Fatalf("loom's git ran the filter of a repository the agent made, outside the sandbox: $HOME/pwned = %q", b)
	}
}

// jsonArgs is a tool call's arguments as JSON.
func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
