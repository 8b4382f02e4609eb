package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitworktree"
)

// worktreeRepo is a repository with a.txt (ten lines) and greet.txt.
func worktreeRepo(t *testing.T) string {
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, "line "+string(rune('0'+i%10)))
	}
	dir := gittest.Repo(t, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n", "greet.txt": "hello\n"})
	r, _ := filepath.EvalSymlinks(dir)
	return r
}

// worktreeAttack writes into the user's tree (userDir) and into its own
// working directory with a command, then edits line 1 of a.txt.
func worktreeAttack(userDir string) string {
	return `
[[step]]
match.last_role = "user"
text = ["Working."]
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo pwned > ` + userDir + `/pwned.txt; echo ok > made.txt; cat made.txt"}'
[[step]]
match.last_tool_result_contains = "blocked by the sandbox"` + readEditScript("a.txt", "line 1", "line 1\\n", "line 1 by the agent\\n", "a.txt") + `text = ["Done."]
`
}

// TestExecWorktreeKeepsAUserTreeInsideTmpReadOnly: the user's tree lies
// inside the temp directory commands may write (a checkout under /tmp,
// as in CI). The worktree conversation's commands still cannot write it:
// it is kept read-only (sandbox.Policy.ReadOnlyTrees), not merely left
// out of the workspace's grant.
func TestExecWorktreeKeepsAUserTreeInsideTmpReadOnly(t *testing.T) {
	home, _ := homeAndTmp(t)
	dir := worktreeRepo(t)
	if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	env := append(isolatedEnv(t), "HOME="+home, "TMPDIR="+filepath.Dir(dir))
	r := runLoomEnv(t, env, dir, "", "exec", "--worktree", "--output", "jsonl", "--approve", "bash=allow",
		"--script", writeScript(t, worktreeAttack(dir)), "work")
	if _, err := os.Stat(filepath.Join(dir, "pwned.txt")); err == nil {
		t.Fatalf("a command of the worktree conversation wrote into the user's tree inside TMPDIR\n%s", r.stdout)
	}
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	out, _ := ofType(validEvents(t, eventSchema(t), r.stdout), "tool_completed")[0]["output"].(string)
	if !strings.Contains(out, "blocked by the sandbox") || !strings.Contains(out, "ok\n") {
		t.Fatalf("bash output:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "ok\n" {
		t.Fatalf("the worktree's own write did not come back: made.txt = %q", b)
	}
}

// TestExecWorktreeSandboxAndMerge: exec --worktree runs the turn in a
// worktree outside the user's tree. A command's write to the user's tree
// is refused by the kernel; its write in the worktree and the agent's
// edit come back, merged three-way onto the user's tree, where the
// user's uncommitted edit of line 9 (made after the commit the worktree
// started from) stays. The worktree is then removed.
func TestExecWorktreeSandboxAndMerge(t *testing.T) {
	home, tmp := homeAndTmp(t)
	dir := worktreeRepo(t)
	if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	a := filepath.Join(dir, "a.txt")
	orig, _ := os.ReadFile(a)
	os.WriteFile(a, bytes.Replace(orig, []byte("line 9\n"), []byte("line 9 by the user\n"), 1), 0o644)
	env := append(isolatedEnv(t), "HOME="+home, "TMPDIR="+tmp)
	r := runLoomEnv(t, env, dir, "", "exec", "--worktree", "--output", "jsonl", "--approve", "bash=allow",
		"--script", writeScript(t, worktreeAttack(dir)), "work")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	if seq := sequence(events); !strings.HasPrefix(seq, "worktree_created session_started") || !strings.HasSuffix(seq, "turn_completed worktree_merged") {
		t.Fatalf("events: %s", seq)
	}
	created := ofType(events, "worktree_created")[0]["worktree"].(map[string]any)
	wtPath := created["path"].(string)
	if strings.HasPrefix(wtPath, dir) || !strings.Contains(wtPath, filepath.Join("state", "loom", "worktrees")) {
		t.Fatalf("worktree at %s", wtPath)
	}
	out, _ := ofType(events, "tool_completed")[0]["output"].(string)
	if !strings.Contains(out, "blocked by the sandbox") || !strings.Contains(out, "ok\n") {
		t.Fatalf("bash output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned.txt")); err == nil {
		t.Fatal("a command of the worktree conversation wrote into the user's tree")
	}
	got, _ := os.ReadFile(a)
	if !bytes.Contains(got, []byte("line 1 by the agent\n")) || !bytes.Contains(got, []byte("line 9 by the user\n")) {
		t.Fatalf("a.txt after the merge:\n%s\nstderr:\n%s\nstdout:\n%s", got, r.stderr, r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "ok\n" {
		t.Fatalf("made.txt = %q", b)
	}
	merged := ofType(events, "worktree_merged")[0]["worktree"].(map[string]any)
	if merged["state"] != "merged" || merged["removed"] != true || merged["applied"] != true || len(merged["files"].([]any)) != 2 {
		t.Fatalf("worktree_merged: %v", merged)
	}
	if _, err := os.Stat(wtPath); err == nil {
		t.Fatal("the merged worktree was left")
	}
	if out := gittest.Run(t, dir, "worktree", "list"); strings.Contains(out, wtPath) {
		t.Fatalf("git still lists the worktree:\n%s", out)
	}
}

// TestExecWorktreeKilledIsRecovered: an exec --worktree killed with
// SIGKILL while its command runs leaves an orphan worktree holding the
// command's file. The next loom-lsp worktrees names it (kept, owner
// gone); merge brings the file into the user's tree and removes it; no
// worktree is left.
func TestExecWorktreeKilledIsRecovered(t *testing.T) {
	dir, pidFile, env := worktreeRepo(t), filepath.Join(t.TempDir(), "pid"), isolatedEnv(t)
	script := writeScript(t, `
[[step]]
match.last_role = "user"
text = ["Running it."]
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo work > work.txt; echo $$ > `+pidFile+`; sleep 100 & sleep 100"}'
`)
	cmd := exec.Command(loomBinary, "exec", "--worktree", "--approve", "bash=allow", "--script", script, "run forever")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	pid := startMidBash(t, cmd, pidFile, &stderr)
	cmd.Process.Kill()
	cmd.Wait()
	syscall.Kill(-pid, syscall.SIGKILL)

	r := runLoomEnv(t, env, dir, "", "worktrees")
	if r.code != 0 || !strings.Contains(r.stderr, "kept orphan worktree") || !strings.Contains(r.stderr, "work.txt") {
		t.Fatalf("worktrees after a kill: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], " kept ") || !strings.Contains(lines[1], "gone") || !strings.Contains(lines[1], "1 files") {
		t.Fatalf("listing:\n%s", r.stdout)
	}
	name := strings.Fields(lines[1])[0]
	if r := runLoomEnv(t, env, dir, "", "worktrees", "clean"); r.code != 0 || strings.Contains(r.stdout, name) {
		t.Fatalf("clean removed the worktree holding work: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runLoomEnv(t, env, dir, "", "worktrees", "merge", name); r.code != 0 || !strings.Contains(r.stderr, "merged into your tree") {
		t.Fatalf("merge: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(b) != "work\n" {
		t.Fatalf("work.txt = %q", b)
	}
	if r := runLoomEnv(t, env, dir, "", "worktrees", "--json"); r.code != 0 || r.stdout != "" {
		t.Fatalf("worktrees left after the merge: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestServeRecoversOrphanWorktreeOnStart: a worktree whose owner is gone
// (its manifest names a process start that is not this pid's) and that
// holds nothing unmerged is removed by the LSP daemon on start, and the
// daemon's log says so.
func TestServeRecoversOrphanWorktreeOnStart(t *testing.T) {
	dir, env := worktreeRepo(t), isolatedEnv(t)
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = filepath.Join(v, "loom")
		}
	}
	m := &gitworktree.Manager{Dir: filepath.Join(state, config.WorktreesDir)}
	wt, err := m.Create(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(m.Dir, wt.Name+".json")
	var mf gitworktree.Manifest
	b, _ := os.ReadFile(manifest)
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	mf.Start = "0" // another process than the one with this pid now
	b, _ = json.Marshal(mf)
	os.WriteFile(manifest, b, 0o600)

	logFile := filepath.Join(t.TempDir(), "serve.log")
	cmd := exec.Command(loomBinary, "serve", "--log", logFile)
	cmd.Dir, cmd.Env = dir, env
	var serveErr bytes.Buffer
	cmd.Stderr = &serveErr
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, _ := os.ReadFile(logFile); strings.Contains(string(b), "removed orphan worktree") {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logFile)
			t.Fatalf("no recovery logged in 60 s; log:\n%s\nstderr:\n%s\nmanifest:\n%s", b, serveErr.String(), mustRead(manifest))
		}
		time.Sleep(20 * time.Millisecond) // polling a file the daemon writes
	}
	if _, err := os.Lstat(wt.Path); err == nil {
		t.Fatal("the orphan's checkout is left")
	}
	if _, err := os.Lstat(manifest); err == nil {
		t.Fatal("the orphan's manifest is left")
	}
}

func mustRead(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
