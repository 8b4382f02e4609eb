package gitcommit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// gitTrace runs f with GIT_TRACE on and returns the git subcommands it
// ran, in order.
func gitTrace(t *testing.T, f func()) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", file)
	f()
	os.Unsetenv("GIT_TRACE")
	b, _ := os.ReadFile(file)
	var cmds []string
	for _, m := range regexp.MustCompile(`trace: built-in: git ([a-z-]+)`).FindAllStringSubmatch(string(b), -1) {
		cmds = append(cmds, m[1])
	}
	return cmds
}

// With no hook to run, the auto-commit of an edit builds its tree from
// the parent's trees: six git processes after Open (the trees, the blob,
// mktree, commit-tree, update-ref, the user's index), no temporary index,
// and the index written once (the user's). Before, read-tree, update-index
// and write-tree wrote a temporary index three times.
func TestCommitWritesNoTemporaryIndexWithoutHooks(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "d/e/f.txt": "f\n", "d/g.txt": "g\n"})
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "d/e/f.txt", "agent\n")
	cmds := gitTrace(t, func() {
		plan, err := r.Prepare(ctx, []Change{{Path: filepath.Join(dir, "d/e/f.txt"), Steps: []Step{{Old: "f\n", New: "agent\n"}}}}, message)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(ctx, plan, CommitOptions{RunHooks: true}); err != nil {
			t.Fatal(err)
		}
	})
	if got := strings.Join(cmds, " "); got != "cat-file hash-object mktree commit-tree update-ref update-index" {
		t.Errorf("git ran %s", got)
	}
	if got := gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD"); got != "d/e/f.txt\n" {
		t.Errorf("HEAD holds %q", got)
	}
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status:\n%s", st)
	}
}

// The tree built from the parent's trees is the tree git builds from an
// index, whatever the batch does: edits deep and at the top, a new file
// in new directories, a file removed (its directory emptied, so gone), a
// link, an executable; in both object formats.
func TestDirectTreeIsGitsTree(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Run(t, dir, "init", "-q", "--object-format="+format)
			gittest.Run(t, dir, "config", "user.name", "T")
			gittest.Run(t, dir, "config", "user.email", "t@example.com")
			for name, text := range map[string]string{"a.txt": "a\n", "a-b.txt": "ab\n", "a/x.txt": "x\n", "d/e/f.txt": "f\n", "d/g.txt": "g\n", "gone/only.txt": "o\n"} {
				write(t, dir, name, text)
			}
			gittest.Run(t, dir, "add", "-A")
			gittest.Run(t, dir, "commit", "-q", "-m", "init")
			r, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, "d/e/f.txt", "agent\n")
			write(t, dir, "a.txt", "top\n")
			write(t, dir, "new/deep/n.txt", "new\n")
			os.Remove(filepath.Join(dir, "gone/only.txt"))
			os.Symlink("a.txt", filepath.Join(dir, "link"))
			os.WriteFile(filepath.Join(dir, "a/run.sh"), []byte("#!/bin/sh\n"), 0o755)
			plan, err := r.Prepare(ctx, []Change{
				{Path: filepath.Join(dir, "d/e/f.txt"), Steps: []Step{{Old: "f\n", New: "agent\n"}}},
				{Path: filepath.Join(dir, "a.txt"), Steps: []Step{{Old: "a\n", New: "top\n"}}},
				{Path: filepath.Join(dir, "new/deep/n.txt"), Created: true, Steps: []Step{{Old: "", New: "new\n"}}},
				{Path: filepath.Join(dir, "gone/only.txt"), FromDisk: true},
				{Path: filepath.Join(dir, "link"), FromDisk: true},
				{Path: filepath.Join(dir, "a/run.sh"), FromDisk: true},
			}, message)
			if err != nil {
				t.Fatal(err)
			}
			var res *Result
			cmds := strings.Join(gitTrace(t, func() { res, err = r.Commit(ctx, plan, CommitOptions{}) }), " ")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(cmds, "mktree") || strings.Contains(cmds, "write-tree") {
				t.Errorf("the tree was not built from trees: git ran %s", cmds)
			}
			// git's own tree of the same change, from an index.
			gittest.Run(t, dir, "add", "-A")
			want := gittest.Run(t, dir, "write-tree")
			if got := gittest.Run(t, dir, "rev-parse", res.SHA+"^{tree}"); got != want {
				t.Errorf("tree %s, git's %s:\n%s", got, want, gittest.Run(t, dir, "ls-tree", "-r", "-t", res.SHA))
			}
			gittest.Run(t, dir, "fsck", "--strict")
		})
	}
}

// A file where the parent has a directory cannot be built from trees:
// git decides, in an index, as before (the directory's files go).
func TestDirectTreeFallsBackToAnIndex(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "d/f.txt": "f\n"})
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "d"))
	write(t, dir, "d", "now a file\n")
	plan, err := r.Prepare(ctx, []Change{{Path: filepath.Join(dir, "d"), Created: true, Steps: []Step{{Old: "", New: "now a file\n"}}}}, message)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	cmds := strings.Join(gitTrace(t, func() { res, err = r.Commit(ctx, plan, CommitOptions{}) }), " ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmds, "write-tree") {
		t.Errorf("git ran %s, want the index's write-tree", cmds)
	}
	if got := gittest.Run(t, dir, "ls-tree", "-r", "--name-only", res.SHA); got != "a.txt\nd\n" {
		t.Errorf("the commit holds %q", got)
	}
}
