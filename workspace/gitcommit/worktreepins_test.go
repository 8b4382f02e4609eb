package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// TestWorktreeFilterPins: a filter the repository's own .git/config
// defines (Git LFS's kind) stays; one a worktree file it includes
// defines is pinned empty.
func TestWorktreeFilterPins(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
	gittest.Run(t, dir, "config", "filter.lfs.clean", "git-lfs clean -- %f")
	gittest.Run(t, dir, "config", "include.path", "../.gitconfig.local")
	os.WriteFile(filepath.Join(dir, ".gitconfig.local"), []byte("[filter \"x\"]\n\tclean = cat\n\tprocess = cat\n"), 0o644)
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"filter.x.clean", ""}, {"filter.x.process", ""}}
	if !reflect.DeepEqual(r.git.pins, want) {
		t.Fatalf("pins %v, want %v", r.git.pins, want)
	}
}
