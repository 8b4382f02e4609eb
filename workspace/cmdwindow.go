package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Which files a command the agent ran changed comes from the folder's
// own file watcher, not from scanning the repository: the watcher hands
// every change it sees (before debouncing) to the folder's
// commandWindows, and a window opened just before the command and closed
// just after it collects the paths changed meanwhile. Closing waits for
// a fence: a file written in a private directory the watcher also
// watches; inotify delivers one instance's events in order, so once the
// fence's event arrives, every change made before the command ended has
// been seen. The cost is the command's own changes, whatever the
// repository's size.
//
// When the watcher lost events (queue overflow) it rescans by
// modification time, and those files reach the open windows too. When
// there is no watcher, or it hit the watch limit and only rescans
// periodically, or the fence does not come back, the window falls back
// to a walk of the folder for files modified since it opened (the only
// case that costs in proportion to the repository).
//
// The limit: a file another program (not the editor) writes while the
// command runs is in the window too; nothing tells it apart from the
// command's. It is reported with the command's changes (never committed),
// and discard refuses it once it changed again.

// fenceWait bounds the wait for a fence's event.
const fenceWait = 2 * time.Second

// commandWindows collects the watcher's changes for the open windows. It
// is safe for concurrent use.
type commandWindows struct {
	mu     sync.Mutex
	open   map[*commandWindow]bool
	fences map[string]chan struct{}
	seq    uint64
	// fenceDir is the watcher's private directory, "" while no watcher
	// runs; degraded is set when the watcher only rescans periodically.
	fenceDir string
	degraded bool
	// touched are the paths the watcher saw change (preimage.go); seeded
	// is set once git's dirty files joined them.
	touched map[string]bool
	seeded  bool
}

// commandWindow is one command's window.
type commandWindow struct {
	start time.Time
	paths map[string]bool
}

func newCommandWindows() *commandWindows {
	return &commandWindows{open: map[*commandWindow]bool{}, fences: map[string]chan struct{}{}}
}

// watching records the watcher's fence directory ("" when it stopped)
// and whether it is degraded.
func (cw *commandWindows) watching(fenceDir string, degraded bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.fenceDir, cw.degraded = fenceDir, degraded
	if fenceDir == "" {
		for name, ch := range cw.fences {
			close(ch)
			delete(cw.fences, name)
		}
	}
}

// changed records a change the watcher saw (any goroutine).
func (cw *commandWindows) changed(path string) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.touchLocked(path)
	for w := range cw.open {
		w.paths[path] = true
	}
}

// fenceEvent handles an event in the fence directory and reports whether
// path is in it.
func (cw *commandWindows) fenceEvent(path string) bool {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.fenceDir == "" || filepath.Dir(path) != cw.fenceDir {
		return false
	}
	if ch, ok := cw.fences[path]; ok {
		close(ch)
		delete(cw.fences, path)
	}
	return true
}

// openWindow starts collecting changes.
func (cw *commandWindows) openWindow() *commandWindow {
	w := &commandWindow{start: time.Now(), paths: map[string]bool{}}
	cw.mu.Lock()
	cw.open[w] = true
	cw.mu.Unlock()
	return w
}

// closeWindow waits until the watcher has seen every change made so far,
// stops collecting, and returns the paths changed in the window (under
// root), sorted out of the way of nothing: the caller decides whose they
// are. scanned reports that the fallback walk found them.
func (cw *commandWindows) closeWindow(w *commandWindow, root string) (paths []string, scanned bool) {
	ok := cw.fence()
	cw.mu.Lock()
	delete(cw.open, w)
	degraded := cw.degraded
	cw.mu.Unlock()
	if !ok || degraded {
		for _, p := range modifiedSince(root, w.start) {
			w.paths[p] = true
		}
		scanned = true
	}
	for p := range w.paths {
		if p == root || !strings.HasPrefix(p, root+string(filepath.Separator)) {
			continue
		}
		paths = append(paths, p)
	}
	return paths, scanned
}

// fence writes a file in the fence directory and waits for the watcher
// to see it; false when there is no watcher or it did not come back.
func (cw *commandWindows) fence() bool {
	cw.mu.Lock()
	if cw.fenceDir == "" {
		cw.mu.Unlock()
		return false
	}
	cw.seq++
	name := filepath.Join(cw.fenceDir, "f"+strconv.FormatUint(cw.seq, 10))
	ch := make(chan struct{})
	cw.fences[name] = ch
	cw.mu.Unlock()
	defer os.Remove(name)
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		cw.mu.Lock()
		delete(cw.fences, name)
		cw.mu.Unlock()
		return false
	}
	select {
	case <-ch:
		cw.mu.Lock()
		alive := cw.fenceDir != ""
		cw.mu.Unlock()
		return alive
	case <-time.After(fenceWait):
		cw.mu.Lock()
		delete(cw.fences, name)
		cw.mu.Unlock()
		return false
	}
}

// modifiedSince walks root (skipping .git) for the files modified at or
// after since (less a second, for coarse clocks).
func modifiedSince(root string, since time.Time) []string {
	since = since.Add(-time.Second)
	var out []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && !info.ModTime().Before(since) {
			out = append(out, path)
		}
		return nil
	})
	return out
}
