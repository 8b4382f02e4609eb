package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadsFollowNoDirectorySwappedForALink: read_file and grep check a
// path (symlinks resolved, inside the workspace), then read it. A command
// left running in the background swaps a directory of that path for a
// symbolic link to a directory outside (renameat2 RENAME_EXCHANGE, in a
// loop): a read that opened the checked path again, by name, could then
// read through the link with the user's rights — a file the sandbox
// hides from commands (keys, credentials). The read must open nothing
// but what was checked.
func TestReadsFollowNoDirectorySwappedForALink(t *testing.T) {
	env := newEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	writeFiles(t, outside, map[string]string{"secret": "TOPSECRET credentials\n"})
	writeFiles(t, env.Root, map[string]string{"d/secret": "decoy\n"})
	if err := os.Symlink(outside, filepath.Join(env.Root, "swap")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, swap := filepath.Join(env.Root, "d"), filepath.Join(env.Root, "swap")
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := 0; i < 1000; i++ {
		for _, r := range []Result{
			run(t, ReadFile{}, env, map[string]any{"path": "d/secret"}),
			run(t, Grep{}, env, map[string]any{"pattern": "TOPSECRET|decoy", "path": "d"}),
		} {
			if strings.Contains(r.Text, "TOPSECRET") {
				t.Fatalf("read %d went through a swapped link to a file outside the workspace:\n%s", i, r.Text)
			}
		}
	}
}
