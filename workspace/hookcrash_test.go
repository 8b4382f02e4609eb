package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestHelperCommitDaemon is the daemon TestHookKilledMidCommit kills: it
// runs one turn whose commit blocks in the user's pre-commit hook.
func TestHelperCommitDaemon(t *testing.T) {
	if os.Getenv("LOOM_TEST_HELPER") != "commit-kill9" {
		t.Skip("helper process")
	}
	// Commands are allowed: the hook runs (in the sandbox).
	h := newTestHostIn(t, os.Getenv("LOOM_STATE"), editAndCreate, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(os.Getenv("LOOM_FOLDER"))
	if err != nil {
		t.Fatal(err)
	}
	s.Ask(context.Background(), "greet the world")
	select {} // until killed, in the hook
}

// A daemon killed with SIGKILL while its commit ran (here: in the user's
// pre-commit hook) leaves the journal saying so: the resumed session
// tells the user, and loom.commit makes the commit.
func TestHookKilledMidCommit(t *testing.T) {
	state := t.TempDir()
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	head := runGit(t, dir, "rev-parse", "HEAD")
	fifo := newFIFO(t, "started")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte("#!/bin/sh\necho started > '"+fifo+"'\nexec sleep 600\n"), 0o755)
	killDaemonAt(t, "TestHelperCommitDaemon", fifo, []string{"LOOM_TEST_HELPER=commit-kill9", "LOOM_STATE=" + state, "LOOM_FOLDER=" + dir},
		30*time.Second, "the pre-commit hook")
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("something was committed")
	}

	h := newTestHostIn(t, state, editAndCreate, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the interrupted commit's report", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "the agent's change to greet.txt, new file.txt was not committed: the daemon stopped during the commit; run loom.commit")
	})
	os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	msg, err := s.Changes().CommitPending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "committed") {
		t.Fatalf("CommitPending said %q", msg)
	}
	if got := runGit(t, dir, "show", "HEAD:greet.txt"); got != "hello, world\n" {
		t.Fatalf("HEAD:greet.txt = %q", got)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
	if _, err := s.Changes().CommitPending(context.Background()); !errors.Is(err, ErrNoPendingCommit) {
		t.Fatalf("a second CommitPending: %v", err)
	}
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\n" {
		t.Fatalf("after undo greet.txt = %q", got)
	}
}
