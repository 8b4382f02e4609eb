package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
	"golang.org/x/sys/unix"
)

// TestToolReadsThroughTheOverlayFollowNoSwappedLink: the read tools as
// loom runs them (their files from the editor overlay, else disk) while
// a command left in the background swaps a directory of the path for a
// symbolic link to a directory outside the workspace: no read goes
// through the link (tools.TestReadsFollowNoDirectorySwappedForALink is
// the same against the disk alone).
func TestToolReadsThroughTheOverlayFollowNoSwappedLink(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(outside, "secret"), []byte("TOPSECRET credentials\n"), 0o600)
	os.MkdirAll(filepath.Join(root, "d"), 0o755)
	os.WriteFile(filepath.Join(root, "d", "secret"), []byte("decoy\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "swap")); err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Root: root, Files: NewOverlay(), Reads: tools.NewReadTracker()}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "d"), unix.AT_FDCWD, filepath.Join(root, "swap"), unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := 0; i < 1000; i++ {
		for _, c := range []struct {
			tool tools.Tool
			args map[string]any
		}{
			{tools.ReadFile{}, map[string]any{"path": "d/secret"}},
			{tools.Grep{}, map[string]any{"pattern": "TOPSECRET|decoy", "path": "d"}},
		} {
			args, _ := json.Marshal(c.args)
			r, err := c.tool.Run(context.Background(), env, args)
			if err != nil {
				t.Fatalf("%s: %v", c.tool.Name(), err)
			}
			if strings.Contains(r.Text, "TOPSECRET") {
				t.Fatalf("read %d went through a swapped link to a file outside the workspace:\n%s", i, r.Text)
			}
		}
	}
}

// swapLoop swaps dir (a directory) and link (a symbolic link to a
// directory outside) until stop, as a command left in the background
// would.
func swapLoop(t *testing.T, dir, link string) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}

// TestLoomsOwnReadsForTheModelFollowNoSwappedLink: what loom itself reads
// for the model — AGENTS.md (the system prompt) and a skill's bundled
// file — is checked to lie inside the folder (the skill), then read: a
// directory swapped for a link in between must not bring a file from
// outside.
func TestLoomsOwnReadsForTheModelFollowNoSwappedLink(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	for _, name := range []string{"AGENTS.md", "ref.md"} {
		os.WriteFile(filepath.Join(outside, name), []byte("TOPSECRET credentials\n"), 0o600)
	}
	skill := filepath.Join(root, ".claude", "skills", "s")
	for _, d := range []string{filepath.Join(root, "d"), filepath.Join(skill, "d")} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "AGENTS.md"), []byte("decoy\n"), 0o644)
		os.WriteFile(filepath.Join(d, "ref.md"), []byte("decoy\n"), 0o644)
		if err := os.Symlink(outside, filepath.Join(filepath.Dir(d), "swap")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d/AGENTS.md", filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	stop1 := swapLoop(t, filepath.Join(root, "d"), filepath.Join(root, "swap"))
	stop2 := swapLoop(t, filepath.Join(skill, "d"), filepath.Join(skill, "swap"))
	defer stop1()
	defer stop2()
	for i := 0; i < 1000; i++ {
		if in := readInstructions([]string{filepath.Join(root, "AGENTS.md")}); strings.Contains(in.text, "TOPSECRET") {
			t.Fatalf("read %d: AGENTS.md brought a file from outside into the system prompt:\n%s", i, in.text)
		}
		if b, _ := readBeneath(skill, "d/ref.md"); strings.Contains(string(b), "TOPSECRET") {
			t.Fatalf("read %d: a skill's bundled file came from outside the skill: %q", i, b)
		}
	}
}
