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
)

// TestLoomsGitRunsNoFilterFromAWorktreeFile: the repository's own
// .git/config includes a worktree file that does not exist yet
// (include.path = ../.gitconfig.local, for local overrides). The sandbox
// cannot keep a missing name at the folder's top level from being made,
// so a command makes it, with a clean filter that .gitattributes picks.
// loom's git (the auto-commit hashes the agent's files with the
// repository's filters, as Git LFS needs) ran it with the user's rights.
// A filter defined in a worktree file is the agent's, not the user's:
// loom's git pins it empty.
func TestLoomsGitRunsNoFilterFromAWorktreeFile(t *testing.T) {
	home := t.TempDir()
	mark := filepath.Join(home, "pwned")
	dir := gitRepo(t, map[string]string{"a.txt": "one\n"})
	runGit(t, dir, "config", "include.path", "../.gitconfig.local")
	// What the command made:
	os.WriteFile(filepath.Join(dir, ".gitconfig.local"), []byte("[filter \"x\"]\n\tclean = \"sh -c 'echo pwned > "+mark+"; cat'\"\n\tsmudge = cat\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.txt filter=x\n"), 0o644)
	// a.txt's stat changed (same bytes): git status hashes it again.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "a.txt"), old, old)
	// A command (before which loom asks git status what is dirty), then
	// an edit (the auto-commit).
	model := scriptModel([]fsm.ToolCall{call("b", "bash", `{"command":"echo hi"}`)},
		[]fsm.ToolCall{call("w", "write_file", `{"path":"b.txt","content":"two\n"}`)})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	note := hookOutcome(t, h, dir)
	if b, err := os.ReadFile(mark); err == nil {
		t.Fatalf("loom's git ran a filter a worktree file defines (%q); hook: %s %q", b, note.Kind, note.Text)
	}
	if note.Kind != NoteCommit {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
}

// TestACommandsIncludedGitConfigIsNamed: that file, made by a command, is
// held like a protected name (the user's own git reads it): moved out of
// the folder, and named to the user.
func TestACommandsIncludedGitConfigIsNamed(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "one\n"})
	runGit(t, dir, "config", "include.path", "../.gitconfig.local")
	model := scriptModel([]fsm.ToolCall{call("b", "bash", `{"command":"printf '[core]\\n' > .gitconfig.local"}`)})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the notice naming .gitconfig.local", func(n Notification) bool {
		return n.Kind == NoteInfo && n.Visible && strings.Contains(n.Text, "created .gitconfig.local") && strings.Contains(n.Text, "loom moved it out of the folder")
	})
	if _, err := os.Lstat(filepath.Join(dir, ".gitconfig.local")); err == nil {
		t.Fatal(".gitconfig.local is in the folder: the user's git includes it")
	}
}
