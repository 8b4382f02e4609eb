package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// turnsModel answers turn k (the k-th prompt) with its batches, one per
// request, then "done".
func turnsModel(turns ...[][]fsm.ToolCall) llm.Provider {
	return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		turn, batch := 0, 0
		for _, m := range req.Messages {
			switch {
			case m.Role == fsm.RoleUser && !strings.HasPrefix(m.Content, "[loom]"):
				turn, batch = turn+1, 0
			case m.Role == fsm.RoleAssistant && len(m.ToolCalls) > 0:
				batch++
			}
		}
		if turn >= 1 && turn <= len(turns) && batch < len(turns[turn-1]) {
			respond(req, emit, "", turns[turn-1][batch]...)
			return
		}
		respond(req, emit, "done")
	})
}

func edit(id, path, old, new string) fsm.ToolCall {
	return call(id, "edit_file", `{"path":"`+path+`","old_string":"`+old+`","new_string":"`+new+`"}`)
}

// ask runs one prompt to its end and returns the newest commit's sha.
func ask(t *testing.T, h *testHost, s *Conversation, prompt string) string {
	t.Helper()
	turn, err := s.Ask(context.Background(), prompt)
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, turn)
	return h.editor.waitFor(t, "the commit of turn "+prompt, func(n Notification) bool { return n.Kind == NoteCommit && n.Turn == turn }).Commit.SHA
}

const fiveLines = "one\ntwo\nthree\nfour\nfive\n"

// Undo of the older of two commits takes its hunks back with a revert
// commit, keeping the newer commit's hunks and the user's uncommitted
// edit to the same file; then the newer one can be undone too.
func TestUndoTheOlderOfTwoCommitsKeepsTheNewer(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": fiveLines})
	model := turnsModel(
		[][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e1", "f.txt", "one", "ONE")}},
		[][]fsm.ToolCall{{call("r2", "read_file", `{"path":"f.txt"}`)}, {edit("e2", "f.txt", "three", "THREE"), call("w", "write_file", `{"path":"new.txt","content":"new\n"}`)}},
	)
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := ask(t, h, s, "first")
	second := ask(t, h, s, "second")
	if first == second {
		t.Fatal("one commit for two turns")
	}
	path := filepath.Join(dir, "f.txt")
	os.WriteFile(path, []byte("ONE\ntwo\nTHREE\nfour\nfive, mine\n"), 0o644)
	msg, err := s.Changes().Undo(context.Background(), first[:8])
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\ntwo\nTHREE\nfour\nfive, mine\n" {
		t.Fatalf("f.txt = %q", got)
	}
	if got := runGit(t, dir, "show", "HEAD:f.txt"); got != "one\ntwo\nTHREE\nfour\nfive\n" {
		t.Fatalf("HEAD's f.txt = %q", got)
	}
	if parent := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD~1")); parent != second {
		t.Fatalf("HEAD~1 = %s, want the newer commit %s", parent, second)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Fatalf("the newer commit's file is gone: %v", err)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M f.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	if !strings.Contains(msg, "undid the auto-commit "+first[:7]) || !strings.Contains(msg, "with a new commit") || !strings.Contains(msg, "your later edits are kept in f.txt") {
		t.Fatalf("Undo said %q", msg)
	}
	// The newer one, not HEAD any more either.
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\ntwo\nthree\nfour\nfive, mine\n" {
		t.Fatalf("f.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("new.txt is still there: %v", err)
	}
	if _, err := s.Changes().Undo(context.Background(), first); err == nil || !strings.Contains(err.Error(), "this session has made no commit") {
		t.Fatalf("a third undo: %v", err)
	}
}

// Undo names the file whose later changes overlap the agent's, and
// changes nothing; a sha the session did not make is refused.
func TestUndoBySHARefuses(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": fiveLines})
	model := turnsModel(
		[][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e1", "f.txt", "one", "ONE")}},
		[][]fsm.ToolCall{{call("r2", "read_file", `{"path":"f.txt"}`)}, {edit("e2", "f.txt", "ONE", "ONE!")}},
	)
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	first := ask(t, h, s, "first")
	ask(t, h, s, "second")
	head := runGit(t, dir, "rev-parse", "HEAD")
	_, err := s.Changes().Undo(context.Background(), first)
	if err == nil || !strings.Contains(err.Error(), "f.txt since the commit overlap the agent's") {
		t.Fatalf("Undo: %v", err)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("a refused undo moved HEAD")
	}
	root := strings.TrimSpace(runGit(t, dir, "rev-list", "--max-parents=0", "HEAD"))
	if _, err := s.Changes().Undo(context.Background(), root); err == nil || !strings.Contains(err.Error(), "is not an auto-commit of this session") {
		t.Fatalf("Undo of the user's commit: %v", err)
	}
}

// A pushed commit is taken back by a revert commit, never by moving the
// branch under the remote.
func TestUndoOfAPushedCommitReverts(t *testing.T) {
	_, s, dir := undoSetup(t, nil)
	remote := t.TempDir()
	runGit(t, remote, "init", "-q", "--bare")
	runGit(t, dir, "remote", "add", "origin", remote)
	runGit(t, dir, "push", "-q", "origin", "main")
	pushed := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD"))
	msg, err := s.Changes().Undo(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if parent := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD~1")); parent != pushed || !strings.Contains(msg, "git revert") {
		t.Fatalf("HEAD~1 = %s, want the pushed %s; Undo said %q", parent, pushed, msg)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\n" {
		t.Fatalf("greet.txt = %q", got)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
}

// Undo while a turn runs waits for it to end; it then takes back that
// turn's commit, the newest, and the worktree holds no trace of it.
func TestUndoWhileBusyWaitsForTheTurn(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": fiveLines})
	fifo, open := gate(t)
	model := turnsModel(
		[][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e1", "f.txt", "one", "ONE")}},
		[][]fsm.ToolCall{{call("b", "bash", `{"command":"cat '`+fifo+`' >/dev/null"}`)}, {call("r2", "read_file", `{"path":"f.txt"}`)}, {edit("e2", "f.txt", "five", "FIVE")}},
	)
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	first := ask(t, h, s, "first")
	turn, err := s.Ask(context.Background(), "second")
	if err != nil {
		t.Fatal(err)
	}
	g := open() // the command runs: the turn is busy
	type result struct {
		msg string
		err error
	}
	undone := make(chan result, 1)
	go func() {
		msg, err := s.Changes().Undo(context.Background(), "")
		undone <- result{msg, err}
	}()
	select {
	case r := <-undone:
		t.Fatalf("Undo did not wait for the turn: %q %v", r.msg, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	g.Close()
	h.editor.turnEnded(t, turn)
	second := h.editor.waitFor(t, "the second commit", func(n Notification) bool { return n.Kind == NoteCommit && n.Turn == turn }).Commit.SHA
	r := <-undone
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.msg, second[:7]) {
		t.Fatalf("Undo took back %q, want the turn's commit %s", r.msg, second[:7])
	}
	if head := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")); head != first {
		t.Fatalf("HEAD = %s, want %s", head, first)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "ONE\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("f.txt = %q", got)
	}
}
