package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// undoFileSetup runs one turn whose single commit edits f.txt (line one)
// and g.txt, and returns the session, the folder and the commit.
func undoFileSetup(t *testing.T) (*testHost, *Conversation, string, string) {
	t.Helper()
	dir := gitRepo(t, map[string]string{"f.txt": fiveLines, "g.txt": "gee\n"})
	model := turnsModel(
		[][]fsm.ToolCall{
			{call("r", "read_file", `{"path":"f.txt"}`), call("r2", "read_file", `{"path":"g.txt"}`)},
			{edit("e1", "f.txt", "one", "ONE"), edit("e2", "g.txt", "gee", "GEE")},
		},
	)
	h := newTestHost(t, model, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	sha := ask(t, h, s, "first")
	if got := runGit(t, dir, "show", "--name-only", "--format=", sha); got != "f.txt\ng.txt\n" {
		t.Fatalf("the agent's commit holds %q, want f.txt and g.txt", got)
	}
	return h, s, dir, sha
}

// UndoFile takes the agent's hunks out of one file only: the user's line
// typed since stays, the commit's other file keeps the agent's change,
// and one revert commit on top records it; loom.undo then takes that
// revert back (the agent's hunk returns, the user's line still there).
func TestUndoFileKeepsTheUsersEditAndTheOtherFiles(t *testing.T) {
	_, s, dir, sha := undoFileSetup(t)
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("ONE\ntwo\nthree\nfour\nfive, mine\n"), 0o644)
	msg, err := s.Changes().UndoFile(context.Background(), "f.txt", []string{sha[:8]})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f); string(got) != "one\ntwo\nthree\nfour\nfive, mine\n" {
		t.Fatalf("f.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(got) != "GEE\n" {
		t.Fatalf("g.txt = %q: the other file lost the agent's change", got)
	}
	if got := runGit(t, dir, "show", "HEAD:f.txt"); got != fiveLines {
		t.Fatalf("HEAD's f.txt = %q", got)
	}
	if got := runGit(t, dir, "show", "HEAD:g.txt"); got != "GEE\n" {
		t.Fatalf("HEAD's g.txt = %q", got)
	}
	if parent := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD~1")); parent != sha {
		t.Fatalf("HEAD~1 = %s, want the agent's commit %s (kept on the branch)", parent, sha)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M f.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	if !strings.Contains(msg, "undid the agent's changes to f.txt") || !strings.Contains(msg, "your own edits to it are kept") {
		t.Fatalf("UndoFile said %q", msg)
	}
	// The file's revert is the session's newest commit: loom.undo takes it back.
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f); string(got) != "ONE\ntwo\nthree\nfour\nfive, mine\n" {
		t.Fatalf("after undoing the file's undo, f.txt = %q", got)
	}
}

// Without commits, UndoFile takes the file back from the latest turn that
// changed it; a rewind to that turn afterwards restores the other file
// too and leaves the undone file as it is.
func TestUndoFileThenRewind(t *testing.T) {
	_, s, dir, _ := undoFileSetup(t)
	if _, err := s.Changes().UndoFile(context.Background(), filepath.Join(dir, "g.txt"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(got) != "gee\n" {
		t.Fatalf("g.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "ONE\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("f.txt = %q", got)
	}
	if _, err := s.Changes().Rewind(context.Background(), 1, fsm.RestoreFiles); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"f.txt": fiveLines, "g.txt": "gee\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Fatalf("after the rewind %s = %q, want %q", name, got, want)
		}
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
}

// UndoFile refuses, changing nothing, when the user's edit overlaps the
// agent's hunk, when the commit did not change the file, and for a sha
// the session did not make.
func TestUndoFileRefuses(t *testing.T) {
	_, s, dir, sha := undoFileSetup(t)
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("ONE!\ntwo\nthree\nfour\nfive\n"), 0o644)
	head := runGit(t, dir, "rev-parse", "HEAD")
	if _, err := s.Changes().UndoFile(context.Background(), "f.txt", nil); err == nil || !strings.Contains(err.Error(), "overlap the agent's") {
		t.Fatalf("UndoFile over the user's edit of the same line: %v", err)
	}
	if got, _ := os.ReadFile(f); string(got) != "ONE!\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("a refused undo changed f.txt: %q", got)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("a refused undo moved HEAD")
	}
	os.WriteFile(filepath.Join(dir, "h.txt"), []byte("h\n"), 0o644)
	if _, err := s.Changes().UndoFile(context.Background(), "h.txt", []string{sha}); err == nil || !strings.Contains(err.Error(), "did not change h.txt") {
		t.Fatalf("UndoFile of a file the agent did not change: %v", err)
	}
	root := strings.TrimSpace(runGit(t, dir, "rev-list", "--max-parents=0", "HEAD"))
	if _, err := s.Changes().UndoFile(context.Background(), "g.txt", []string{root}); err == nil || !strings.Contains(err.Error(), "not an auto-commit of this session") {
		t.Fatalf("UndoFile from the user's commit: %v", err)
	}
	if _, err := s.Changes().UndoFile(context.Background(), "../outside.txt", nil); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Fatalf("UndoFile outside: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(got) != "GEE\n" {
		t.Fatalf("g.txt = %q", got)
	}
}

// UndoFile while a turn runs waits for it to end: without commits named,
// it then takes back the running turn's change to the file (the latest
// turn that changed it), not the one before, which was the latest when
// the user clicked.
func TestUndoFileWhileBusyWaitsForTheTurn(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": fiveLines})
	fifo, open := gate(t)
	model := turnsModel(
		[][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e1", "f.txt", "one", "ONE")}},
		[][]fsm.ToolCall{{call("b", "bash", `{"command":"cat '`+fifo+`' >/dev/null"}`)}, {call("r2", "read_file", `{"path":"f.txt"}`)}, {edit("e2", "f.txt", "five", "FIVE")}},
	)
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	ask(t, h, s, "first")
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
		msg, err := s.Changes().UndoFile(context.Background(), "f.txt", nil)
		undone <- result{msg, err}
	}()
	g.Close()
	h.editor.turnEnded(t, turn)
	second := h.editor.waitFor(t, "the second commit", func(n Notification) bool { return n.Kind == NoteCommit && n.Turn == turn }).Commit.SHA
	r := <-undone
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "ONE\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("f.txt = %q: want the second turn's FIVE taken back, the first turn's ONE kept", got)
	}
	if parent := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD~1")); parent != second {
		t.Fatalf("HEAD~1 = %s, want the second turn's commit %s", parent, second)
	}
}
