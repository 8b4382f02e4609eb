package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestApprovalWaitDoesNotHoldTheWorktree: while conversation A waits for
// the user to approve a command, conversation B of the same folder edits
// a file and commits it; then A is allowed, and its command runs and is
// reported as A's.
func TestApprovalWaitDoesNotHoldTheWorktree(t *testing.T) {
	dir := gitRepo(t, map[string]string{"b.txt": "bee\n"})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		last := req.Messages[len(req.Messages)-1]
		switch prompt := firstPrompt(req); {
		case last.Role == fsm.RoleUser && prompt == "run the command":
			respond(req, emit, "", call("a1", "bash", `{"command":"echo from-a > a-out.txt"}`))
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
	h.editor.approve = func(a Approval) (bool, error) {
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
	if _, err := os.Stat(filepath.Join(dir, "a-out.txt")); err == nil {
		t.Fatal("A's command ran before it was allowed")
	}
	// Only now the user allows A's command.
	allow <- true
	h.editor.turnEndedIn(t, a.ID(), turnA)
	if got, _ := os.ReadFile(filepath.Join(dir, "a-out.txt")); string(got) != "from-a\n" {
		t.Errorf("A's command wrote %q", got)
	}
	h.editor.waitFor(t, "A's command to finish", func(n Notification) bool {
		return n.Kind == NoteTool && n.Conversation == a.ID() && n.Tool.CallID == "a1" && n.Tool.Status == fsm.ToolSucceeded
	})
}
