package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// Lost events (a queue overflow) are made up by the watcher's rescan,
// which reaches the open command windows too.
func TestCommandWindowGetsTheOverflowRescan(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cw := newCommandWindows()
	w, err := newWatcher(watchOptions{root: dir, events: cw})
	if err != nil {
		t.Fatal(err)
	}
	defer w.fsw.Close()
	defer os.RemoveAll(w.fenceDir)
	win := cw.openWindow()
	path := filepath.Join(dir, "a.txt")
	os.WriteFile(path, []byte("changed\n"), 0o644)
	// The run loop is not reading events here: only the rescan can tell.
	w.error(fsnotify.ErrEventOverflow)
	cw.mu.Lock()
	seen := win.paths[path]
	cw.mu.Unlock()
	if !seen {
		t.Fatalf("the rescan did not reach the window: %v", win.paths)
	}
}

// With no watcher, closing a window walks the folder for the files
// modified since it opened.
func TestCommandWindowWithoutAWatcherWalks(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	cw := newCommandWindows()
	win := cw.openWindow()
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("changed\n"), 0o644)
	paths, scanned := cw.closeWindow(win, dir)
	if !scanned || !slices.Contains(paths, filepath.Join(dir, "b.txt")) {
		t.Fatalf("closeWindow = %v, scanned %v", paths, scanned)
	}
}
