package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// changesOf waits for the hook's command-change report of turn.
func changesOf(t *testing.T, h *testHost, turn uint64) []CommandChange {
	t.Helper()
	return h.editor.waitFor(t, "the command changes", func(n Notification) bool {
		return n.Kind == NoteCommandChanges && n.Turn == turn
	}).Changes
}

func rels(cs []CommandChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Rel)
	}
	return out
}

// Case 1 and the watcher attribution: the command writes three files
// while the user, in the editor, changes and saves a fourth, and another
// program writes a fifth. Nothing a command changed is committed; the
// three are reported with their diffs, the editor's file is the user's
// (not reported), and the fifth, written inside the command's window
// with no editor event claiming it, is reported with the command's — the
// documented limit. A sixth written by another program after the
// command is not. Undo then never touches any of them.
func TestCommandChangesAreReportedNotCommitted(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "mine.txt": "mine\n", "other.txt": "other\n", "late.txt": "late\n", "f.txt": sevenLines})
	fifo, open := gate(t)
	model := turnsModel([][]fsm.ToolCall{
		{call("r", "read_file", `{"path":"f.txt"}`)},
		{edit("e", "f.txt", "seven", "SEVEN"), call("b", "bash", `{"command":"echo A >> a.txt && echo B > b.txt && echo new > new.txt && cat '`+fifo+`' >/dev/null"}`)},
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "mine.txt")
	h.Overlay().Open(mine, 1, "mine\n") // no didSave needed: a didChange claims it
	if _, err := s.Ask(context.Background(), "run it"); err != nil {
		t.Fatal(err)
	}
	g := open()
	// While the command runs: the user types and saves in the editor...
	h.Overlay().Change(mine, 2, []Change{{Text: "mine, half-done\n"}})
	os.WriteFile(mine, []byte("mine, half-done\n"), 0o644)
	// ...and another program writes a file.
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("another program\n"), 0o644)
	g.Close()
	h.editor.turnEnded(t, 1)
	changes := changesOf(t, h, 1)
	os.WriteFile(filepath.Join(dir, "late.txt"), []byte("after the command\n"), 0o644)
	if got := rels(changes); !slices.Equal(got, []string{"a.txt", "b.txt", "new.txt", "other.txt"}) {
		t.Fatalf("reported %q", got)
	}
	for _, c := range changes {
		if c.Rel == "b.txt" && (!strings.Contains(c.Diff, "-b\n+B\n") || c.Created) {
			t.Fatalf("b.txt's report %+v", c)
		}
		if c.Rel == "new.txt" && (!c.Created || !strings.Contains(c.Diff, "+new\n")) {
			t.Fatalf("new.txt's report %+v", c)
		}
	}
	commit := h.editor.waitFor(t, "the commit", func(n Notification) bool { return n.Kind == NoteCommit })
	if files := headFiles(t, dir); files != "f.txt" {
		t.Fatalf("HEAD holds %q, want only the edit tool's f.txt", files)
	}
	notes := strings.Join(commit.Commit.Notes, "\n")
	if !strings.Contains(notes, "not committed: a.txt, b.txt, new.txt, other.txt; keep them") || !strings.Contains(notes, "also changed in your editor meanwhile, so left to you, not reported as the commands': mine.txt") {
		t.Fatalf("notes %q", notes)
	}
	listed, _ := s.Changes().CommandChanges(context.Background())
	if !slices.Equal(rels(listed), rels(changes)) {
		t.Fatalf("CommandChanges = %q", rels(listed))
	}
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"mine.txt": "mine, half-done\n", "a.txt": "a\nA\n", "other.txt": "another program\n", "new.txt": "new\n", "f.txt": sevenLines} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Fatalf("after undo %s = %q, want %q", name, got, want)
		}
	}
}

// Keep commits the named command changes (and undo can take them back);
// discard restores the file as it was before the command, keeping the discarded
// text as a git object, and refuses a file changed since it was
// reported.
func TestKeepAndDiscardCommandChanges(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	model := turnsModel([][]fsm.ToolCall{{call("b", "bash", `{"command":"echo A > a.txt && echo B > b.txt && echo C > c.txt && echo N > n.txt"}`)}})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	if _, err := s.Ask(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	if got := rels(changesOf(t, h, 1)); !slices.Equal(got, []string{"a.txt", "b.txt", "c.txt", "n.txt"}) {
		t.Fatalf("reported %q", got)
	}
	head := runGit(t, dir, "rev-parse", "HEAD")
	if _, err := s.Changes().KeepCommandChanges(context.Background(), []string{"a.txt", "n.txt"}); err != nil {
		t.Fatal(err)
	}
	if files := headFiles(t, dir); files != "a.txt\nn.txt" || runGit(t, dir, "rev-parse", "HEAD~1") != head {
		t.Fatalf("kept commit holds %q", files)
	}
	msg, err := s.Changes().DiscardCommandChanges(context.Background(), []string{"b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(got) != "b\n" {
		t.Fatalf("b.txt = %q", got)
	}
	_, backup, _ := strings.Cut(msg, "git cat-file -p ")
	backup, _, _ = strings.Cut(backup, " ")
	if got := runGit(t, dir, "cat-file", "-p", backup); got != "B\n" {
		t.Fatalf("the discarded text is not kept (%q): %q", msg, got)
	}
	// The user changes c.txt after the report: discard refuses it.
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("C, and mine\n"), 0o644)
	if _, err := s.Changes().DiscardCommandChanges(context.Background(), []string{"c.txt"}); err == nil || !strings.Contains(err.Error(), "c.txt changed since the command's change was reported") {
		t.Fatalf("discard of a changed file: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(got) != "C, and mine\n" {
		t.Fatalf("c.txt = %q", got)
	}
	if _, err := s.Changes().DiscardCommandChanges(context.Background(), []string{"b.txt"}); err == nil || !strings.Contains(err.Error(), "not a command change loom reported") {
		t.Fatalf("a second discard: %v", err)
	}
	left, _ := s.Changes().CommandChanges(context.Background())
	if got := rels(left); !slices.Equal(got, []string{"c.txt"}) {
		t.Fatalf("left %q", got)
	}
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("undo did not take the kept commit back")
	}
}

// TestDiscardKeepsTheUsersOwnEdits: the user edited f.txt and g.txt
// (uncommitted) before the agent's command changed other lines of both;
// the report shows the command's lines only; after the report the user
// edits f.txt again. Discarding f.txt takes the command's line back and
// keeps both of the user's edits; keeping g.txt commits the command's
// line only, the user's edit staying uncommitted in the worktree.
func TestDiscardKeepsTheUsersOwnEdits(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	dir := gitRepo(t, map[string]string{"f.txt": base, "g.txt": base})
	f, g := filepath.Join(dir, "f.txt"), filepath.Join(dir, "g.txt")
	userF := strings.Replace(base, "2\n", "two by the user\n", 1)
	userG := strings.Replace(base, "2\n", "two by the user\n", 1)
	os.WriteFile(f, []byte(userF), 0o644)
	os.WriteFile(g, []byte(userG), 0o644)
	model := turnsModel([][]fsm.ToolCall{{call("b", "bash", `{"command":"sed -i 's/^9$/nine by the command/' f.txt g.txt"}`)}})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	if _, err := s.Ask(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	changes := changesOf(t, h, 1)
	if got := rels(changes); !slices.Equal(got, []string{"f.txt", "g.txt"}) {
		t.Fatalf("reported %q", got)
	}
	for _, c := range changes {
		if !strings.Contains(c.Diff, "+nine by the command") || strings.Contains(c.Diff, "two by the user") {
			t.Fatalf("the diff of %s is not the command's alone:\n%s", c.Rel, c.Diff)
		}
	}
	// The user edits f.txt again after the report.
	now, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(now), "5\n", "five by the user\n", 1)), 0o644)
	msg, err := s.Changes().DiscardCommandChanges(context.Background(), []string{"f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(userF, "5\n", "five by the user\n", 1)
	if got, _ := os.ReadFile(f); string(got) != want {
		t.Fatalf("f.txt after discard %q, want %q (%s)", got, want, msg)
	}
	head := runGit(t, dir, "rev-parse", "HEAD")
	if _, err := s.Changes().KeepCommandChanges(context.Background(), []string{"g.txt"}); err != nil {
		t.Fatal(err)
	}
	if runGit(t, dir, "rev-parse", "HEAD~1") != head {
		t.Fatal("keep made no commit")
	}
	if got := runGit(t, dir, "show", "HEAD:g.txt"); got != strings.Replace(base, "9\n", "nine by the command\n", 1) {
		t.Fatalf("the kept commit has g.txt = %q: want the command's line only", got)
	}
	if got, _ := os.ReadFile(g); string(got) != strings.Replace(userG, "9\n", "nine by the command\n", 1) {
		t.Fatalf("g.txt on disk %q", got)
	}
}

// TestDiscardRefusesOverlappingEdits: after the report the user changes
// the very line the command changed: discard refuses and leaves the file.
func TestDiscardRefusesOverlappingEdits(t *testing.T) {
	base := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	dir := gitRepo(t, map[string]string{"f.txt": base})
	f := filepath.Join(dir, "f.txt")
	model := turnsModel([][]fsm.ToolCall{{call("b", "bash", `{"command":"sed -i 's/^9$/nine by the command/' f.txt"}`)}})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, _ := h.AddFolder(dir)
	if _, err := s.Ask(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	mine := strings.Replace(base, "9\n", "nine by the command, and mine\n", 1)
	os.WriteFile(f, []byte(mine), 0o644)
	if _, err := s.Changes().DiscardCommandChanges(context.Background(), []string{"f.txt"}); err == nil || !strings.Contains(err.Error(), "on the lines the command changed") {
		t.Fatalf("discard over the user's edit of the same line: %v", err)
	}
	if got, _ := os.ReadFile(f); string(got) != mine {
		t.Fatalf("f.txt = %q", got)
	}
}
