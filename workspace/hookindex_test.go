package workspace

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

const sevenLines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"

// Case 2: the user staged one→ONE (git add -p) and the agent edits line
// seven: the hook merges the agent's hunk into the staged version and
// says so, and the user's own next `git commit` keeps the agent's change.
func TestHookStagedChangeKeepsTheAgentsHunk(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": sevenLines})
	path := filepath.Join(dir, "f.txt")
	os.WriteFile(path, []byte(strings.Replace(sevenLines, "one", "ONE", 1)), 0o644)
	runGit(t, dir, "add", "f.txt")
	model := turnsModel([][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e", "f.txt", "seven", "SEVEN")}})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	if _, err := s.Ask(context.Background(), "shout seven"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	note := h.editor.waitFor(t, "the commit", func(n Notification) bool { return n.Kind == NoteCommit })
	if !strings.Contains(strings.Join(note.Commit.Notes, "\n"), "you had staged changes to f.txt: the agent's change was merged into your staged version") {
		t.Fatalf("notes %q", note.Commit.Notes)
	}
	if got := runGit(t, dir, "show", "HEAD:f.txt"); got != strings.Replace(sevenLines, "seven", "SEVEN", 1) {
		t.Fatalf("the agent's commit holds %q", got)
	}
	runGit(t, dir, "commit", "-q", "-m", "the user's own commit")
	want := strings.Replace(strings.Replace(sevenLines, "one", "ONE", 1), "seven", "SEVEN", 1)
	if got := runGit(t, dir, "show", "HEAD:f.txt"); got != want {
		t.Fatalf("the user's commit holds %q, want %q (the agent's hunk reverted?)", got, want)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
}

// Case 3: index.lock is held by the user's own git (a `git commit -a`
// whose editor is open): the commit is made and recorded, the user is
// told what is left; as soon as their git releases the lock (they close
// the editor), the index follows the agent's commit — with no next turn
// — and says so; loom.undo works.
func TestHookWithTheIndexLocked(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": sevenLines, "g.txt": "the user's\n"})
	os.WriteFile(filepath.Join(dir, "g.txt"), []byte("the user's, changed\n"), 0o644)
	release := holdIndexLock(t, dir)
	model := turnsModel([][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e", "f.txt", "seven", "SEVEN")}})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	sha := ask(t, h, s, "shout seven")
	note := h.editor.waitFor(t, "the commit", func(n Notification) bool { return n.Kind == NoteCommit })
	if head := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")); head != sha {
		t.Fatalf("HEAD %s, commit reported %s", head, sha)
	}
	notes := strings.Join(note.Commit.Notes, "\n")
	if !strings.Contains(notes, "another git process holds the index lock") || !strings.Contains(notes, "a plain git commit now would revert it; loom updates it as soon as that lock is released") {
		t.Fatalf("notes %q", notes)
	}
	release() // the user closes the editor: their git commit gives up and unlocks
	h.editor.waitFor(t, "the index update once the lock is free", func(n Notification) bool {
		return n.Kind == NoteInfo && n.Visible && strings.Contains(n.Text, "git's index follows the agent's commit for f.txt")
	})
	if st := runGit(t, dir, "status", "--porcelain"); st != " M g.txt\n" {
		t.Fatalf("status once the lock is free (no turn since):\n%s", st)
	}
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != sevenLines {
		t.Fatalf("f.txt = %q", got)
	}
}

// holdIndexLock starts the user's `git commit -a` in dir and returns once
// its editor is open, that is while git holds .git/index.lock; release
// closes the editor with no message, so that git gives up the commit and
// the lock, and waits for git to exit.
func holdIndexLock(t *testing.T, dir string) (release func()) {
	t.Helper()
	cmd := exec.Command("git", "commit", "-a")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), `GIT_EDITOR=sh -c 'echo editing; read line' --`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "editing\n" {
		t.Fatalf("git commit's editor: %q, %v", line, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "index.lock")); err != nil {
		t.Fatalf("git commit -a holds no index lock while its editor is open: %v", err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		stdin.Write([]byte("\n"))
		stdin.Close()
		go io.Copy(io.Discard, stdout)
		_ = cmd.Wait() // exit 1: "Aborting commit due to empty commit message"
	}
	t.Cleanup(release)
	return release
}

// Undo right after a commit whose index update a lock stopped: it works
// (the index still has the parent's version, which is what undo leaves).
func TestUndoAfterALockedIndex(t *testing.T) {
	dir := gitRepo(t, map[string]string{"f.txt": sevenLines})
	lock := filepath.Join(dir, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	model := turnsModel([][]fsm.ToolCall{{call("r", "read_file", `{"path":"f.txt"}`)}, {edit("e", "f.txt", "seven", "SEVEN")}})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	ask(t, h, s, "shout seven")
	os.Remove(lock)
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
}
