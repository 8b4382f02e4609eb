package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestApprovalWaitDoesNotHoldTheWorktree: while conversation A waits for
// the user to approve a command (or, the sandbox having blocked it, to
// approve running it outside the sandbox), conversation B of the same
// folder edits a file and commits it; then A is allowed, and its command
// runs and is reported as A's.
func TestApprovalWaitDoesNotHoldTheWorktree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		// waitAt is the approval A waits on (1: the command's, 2: the
		// sandbox escalation's); the others are allowed at once.
		waitAt int
		// wrote is the file A's command writes, relative to the folder
		// ("" for ~/.bashrc).
		wrote string
	}{
		{"the command's approval", "echo from-a > a-out.txt", 1, "a-out.txt"},
		{"the sandbox escalation", "echo from-a >> ~/.bashrc", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			if tc.waitAt == 2 {
				t.Setenv("TMPDIR", t.TempDir())
				if s := sandbox.New(sandbox.Policy{Root: home}); !s.Active() {
					t.Skipf("no Landlock here: %s", s.Unavailable())
				}
			}
			dir := gitRepo(t, map[string]string{"b.txt": "bee\n"})
			wrote := filepath.Join(home, ".bashrc")
			if tc.wrote != "" {
				wrote = filepath.Join(dir, tc.wrote)
			}
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				last := req.Messages[len(req.Messages)-1]
				switch prompt := firstPrompt(req); {
				case last.Role == fsm.RoleUser && prompt == "run the command":
					respond(req, emit, "", call("a1", "bash", `{"command":"`+tc.command+`"}`))
				case last.Role == fsm.RoleUser && prompt == "edit b":
					respond(req, emit, "", call("b1", "read_file", `{"path":"b.txt"}`))
				case previousCall(req) == "read_file":
					respond(req, emit, "", call("b2", "edit_file", `{"path":"b.txt","old_string":"bee","new_string":"BEE"}`))
				default:
					respond(req, emit, "done: "+prompt)
				}
			})
			h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAsk })
			asked := make(chan Approval, 1)
			allow, gone := make(chan bool), make(chan struct{})
			t.Cleanup(func() { close(gone) }) // before the host closes: a failed test does not hang
			var mu sync.Mutex
			n := 0
			h.editor.approve = func(a Approval) (bool, error) {
				mu.Lock()
				n++
				wait := n == tc.waitAt
				mu.Unlock()
				if !wait {
					return true, nil
				}
				asked <- a
				select {
				case ok := <-allow:
					return ok, nil
				case <-gone:
					return false, nil
				}
			}
			a, err := h.AddFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := h.Folder(dir)
			b, err := f.New()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			turnA, err := a.Ask(ctx, "run the command")
			if err != nil {
				t.Fatal(err)
			}
			req := <-asked
			if req.Conversation != a.ID() || !strings.Contains(req.Detail, "echo from-a") {
				t.Fatalf("asked %+v", req)
			}
			// A waits for the user; B's turn runs to its end meanwhile.
			turnB, err := b.Ask(ctx, "edit b")
			if err != nil {
				t.Fatal(err)
			}
			commit := h.editor.waitFor(t, "B's commit while A waits for approval", func(n Notification) bool {
				return n.Kind == NoteCommit && n.Conversation == b.ID()
			}).Commit
			h.editor.turnEndedIn(t, b.ID(), turnB)
			if got := runGit(t, dir, "show", "HEAD:b.txt"); got != "BEE\n" {
				t.Errorf("B's commit %s holds b.txt = %q", commit.SHA, got)
			}
			if got, _ := os.ReadFile(wrote); strings.Contains(string(got), "from-a") {
				t.Fatal("A's command ran before it was allowed")
			}
			// Only now the user allows A's command.
			allow <- true
			h.editor.turnEndedIn(t, a.ID(), turnA)
			if got, _ := os.ReadFile(wrote); !strings.Contains(string(got), "from-a") {
				t.Errorf("A's command wrote %q", got)
			}
			h.editor.waitFor(t, "A's command to finish", func(n Notification) bool {
				return n.Kind == NoteTool && n.Conversation == a.ID() && n.Tool.CallID == "a1" && n.Tool.Status == fsm.ToolSucceeded
			})
		})
	}
}

// TestHooksApprovalWaitDoesNotHoldTheWorktree: conversation A edited a
// git hook, so its commit asks whether to run the user's hooks; while A
// waits for that answer, conversation B edits and commits; then A is
// answered and commits.
func TestHooksApprovalWaitDoesNotHoldTheWorktree(t *testing.T) {
	dir := gitRepo(t, map[string]string{".husky/pre-commit": "#!/bin/sh\nexit 0\n", "b.txt": "bee\n"})
	os.Chmod(filepath.Join(dir, ".husky", "pre-commit"), 0o755)
	runGit(t, dir, "config", "core.hooksPath", ".husky")
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		last := req.Messages[len(req.Messages)-1]
		switch prompt := firstPrompt(req); {
		case last.Role == fsm.RoleUser && prompt == "edit the hook":
			respond(req, emit, "", call("a1", "read_file", `{"path":".husky/pre-commit"}`))
		case prompt == "edit the hook" && previousCall(req) == "read_file":
			respond(req, emit, "", call("a2", "edit_file", `{"path":".husky/pre-commit","old_string":"exit 0","new_string":"true; exit 0"}`))
		case last.Role == fsm.RoleUser && prompt == "edit b":
			respond(req, emit, "", call("b1", "read_file", `{"path":"b.txt"}`))
		case prompt == "edit b" && previousCall(req) == "read_file":
			respond(req, emit, "", call("b2", "edit_file", `{"path":"b.txt","old_string":"bee","new_string":"BEE"}`))
		default:
			respond(req, emit, "done: "+prompt)
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAsk })
	asked := make(chan Approval, 1)
	allow, gone := make(chan bool), make(chan struct{})
	t.Cleanup(func() { close(gone) })
	var aID atomic.Value
	aID.Store("")
	h.editor.approve = func(a Approval) (bool, error) {
		if a.Conversation != aID.Load().(string) {
			return false, nil // B's commit: its hooks do not run
		}
		asked <- a
		select {
		case ok := <-allow:
			return ok, nil
		case <-gone:
			return false, nil
		}
	}
	a, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := h.Folder(dir)
	b, err := f.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	aID.Store(a.ID())
	turnA, err := a.Ask(ctx, "edit the hook")
	if err != nil {
		t.Fatal(err)
	}
	if req := <-asked; req.Tool != "git hooks" || req.Conversation != a.ID() {
		t.Fatalf("asked %+v", req)
	}
	turnB, err := b.Ask(ctx, "edit b")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "B's commit while A waits for the hooks answer", func(n Notification) bool {
		return n.Kind == NoteCommit && n.Conversation == b.ID()
	})
	h.editor.turnEndedIn(t, b.ID(), turnB)
	if got := runGit(t, dir, "show", "HEAD:b.txt"); got != "BEE\n" {
		t.Errorf("HEAD:b.txt = %q", got)
	}
	allow <- false
	h.editor.turnEndedIn(t, a.ID(), turnA)
	note := h.editor.waitFor(t, "A's commit", func(n Notification) bool {
		return n.Kind == NoteCommit && n.Conversation == a.ID()
	})
	if !strings.Contains(note.Text, "your git hooks were not run for this commit") {
		t.Errorf("A's commit says %q", note.Text)
	}
	if got := runGit(t, dir, "show", "HEAD:.husky/pre-commit"); !strings.Contains(got, "true; exit 0") {
		t.Errorf("HEAD:.husky/pre-commit = %q", got)
	}
}
