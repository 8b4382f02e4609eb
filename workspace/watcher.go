package workspace

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// watchQuiet is how long a path must stay quiet before its change is
// reported: editors' atomic saves (temp file + rename, vim's backup
// dance) take a few milliseconds and become one change.
const watchQuiet = 75 * time.Millisecond

// watchMaxDelay reports a path that keeps changing (a growing log) at
// least this often.
const watchMaxDelay = time.Second

// degradedRescan is the period of the rescans that stand in for events
// once the inotify watch limit is hit.
const degradedRescan = 2 * time.Second

// watchOptions configures a watcher.
type watchOptions struct {
	// root is the workspace folder, watched with all its directories
	// except .git and those git ignores.
	root string
	// configFiles are watched too (their directory when outside root);
	// a change to one calls onConfig instead of onFiles.
	configFiles []string
	// onFiles gets the debounced changes: absolute paths of files that
	// were created, written, removed or renamed. Called on the watcher's
	// goroutine.
	onFiles func(paths []string)
	// onConfig is called once per batch of changes touching a config file.
	onConfig func()
	// instructionFiles (AGENTS.md) are watched like configFiles; a change
	// to one calls onInstructions once per batch, and is reported to
	// onFiles as well when it is inside root.
	instructionFiles []string
	onInstructions   func()
	log              *slog.Logger
	// quiet overrides watchQuiet (tests).
	quiet time.Duration
	// addWatch adds one directory; tests replace it to simulate the
	// inotify limit. Default: the fsnotify watcher's Add.
	addWatch func(fsw *fsnotify.Watcher, dir string) error
	// events, when set, gets every change under root as it is seen (for
	// the commands' windows, cmdwindow.go), and the watcher keeps a
	// private fence directory for it.
	events *commandWindows
}

// watcher watches a workspace with fsnotify: every directory is added on
// its own (there is no recursive watch on Linux), new directories as they
// appear. An event-queue overflow triggers a rescan (by modification time)
// and a warning; hitting the watch limit degrades to periodic rescans.
// It never crashes the session: errors are logged.
type watcher struct {
	opts    watchOptions
	fsw     *fsnotify.Watcher
	watched map[string]bool
	ignored map[string]bool // directories git ignores, absolute
	config  map[string]bool
	instr   map[string]bool // instruction files
	git     bool            // root is in a git repository

	pending  map[string]pendingChange
	degraded bool
	// synced is when the watcher last knew of every change; a rescan
	// reports the files modified since.
	synced time.Time
	// fenceDir is the private directory of opts.events' fences.
	fenceDir string
}

type pendingChange struct{ first, last time.Time }

// newWatcher sets up the watches; run then delivers the changes.
func newWatcher(opts watchOptions) (*watcher, error) {
	fsw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, err
	}
	if opts.quiet <= 0 {
		opts.quiet = watchQuiet
	}
	if opts.addWatch == nil {
		opts.addWatch = (*fsnotify.Watcher).Add
	}
	if opts.log == nil {
		opts.log = slog.New(slog.DiscardHandler)
	}
	w := &watcher{opts: opts, fsw: fsw, watched: map[string]bool{}, ignored: map[string]bool{},
		config: map[string]bool{}, instr: map[string]bool{}, pending: map[string]pendingChange{}, synced: time.Now()}
	w.loadIgnored()
	for _, f := range opts.instructionFiles {
		w.instr[filepath.Clean(f)] = true
	}
	for _, f := range opts.configFiles {
		w.config[filepath.Clean(f)] = true
	}
	for f := range w.special() {
		if dir := filepath.Dir(f); !w.inRoot(dir) {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				w.add(dir)
			}
		}
	}
	w.addTree(opts.root, false)
	if opts.events != nil {
		if dir, err := os.MkdirTemp("", "loom-fence-"); err == nil {
			if err := fsw.Add(dir); err == nil {
				w.fenceDir = dir
			} else {
				os.Remove(dir)
			}
		}
		opts.events.watching(w.fenceDir, w.degraded)
	}
	return w, nil
}

// special returns the config and instruction files, which are watched
// even outside root.
func (w *watcher) special() map[string]bool {
	all := make(map[string]bool, len(w.config)+len(w.instr))
	for f := range w.config {
		all[f] = true
	}
	for f := range w.instr {
		all[f] = true
	}
	return all
}

func (w *watcher) inRoot(path string) bool {
	return path == w.opts.root || strings.HasPrefix(path, w.opts.root+string(filepath.Separator))
}

// loadIgnored lists the directories git ignores under root, in one git
// call that does not descend into them.
func (w *watcher) loadIgnored() {
	cmd := gitcmd.Command(context.Background(), w.opts.root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	out, err := cmd.Output()
	if err != nil {
		return // not a git repository: only .git is skipped
	}
	w.git = true
	for _, p := range gitcommit.NulFields(string(out)) {
		if strings.HasSuffix(p, "/") {
			w.ignored[filepath.Join(w.opts.root, filepath.FromSlash(strings.TrimSuffix(p, "/")))] = true
		}
	}
}

// skipDir tells whether a directory is not watched.
func (w *watcher) skipDir(dir string, fresh bool) bool {
	if filepath.Base(dir) == ".git" || w.ignored[dir] {
		return true
	}
	if fresh && w.git {
		// A directory that appeared after start: ask git.
		cmd := gitcmd.Command(context.Background(), w.opts.root, "check-ignore", "-q", "--", dir)
		if cmd.Run() == nil {
			w.ignored[dir] = true
			return true
		}
	}
	return false
}

// add watches one directory. Hitting the watch limit degrades the watcher
// to periodic rescans.
func (w *watcher) add(dir string) bool {
	if w.watched[dir] {
		return true
	}
	if w.degraded {
		return false
	}
	if err := w.opts.addWatch(w.fsw, dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			w.degraded = true
			w.opts.log.Warn("file watch limit reached (fs.inotify.max_user_watches): rescanning periodically instead",
				"dir", dir, "watched", len(w.watched), "err", err)
			return false
		}
		w.opts.log.Debug("cannot watch a directory", "dir", dir, "err", err)
		return false
	}
	w.watched[dir] = true
	return true
}

// addTree watches dir and every directory under it. With report, the
// files found are reported as changed (they appeared with the directory,
// possibly before its watch).
func (w *watcher) addTree(dir string, report bool) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && path != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != w.opts.root && w.skipDir(path, report) {
				return filepath.SkipDir
			}
			w.add(path)
			return nil
		}
		if report {
			w.touch(path, time.Now())
		}
		return nil
	})
}

// run delivers changes until ctx is done, then closes the watches.
func (w *watcher) run(ctx context.Context) {
	defer w.fsw.Close()
	if w.opts.events != nil {
		defer func() {
			w.opts.events.watching("", false)
			if w.fenceDir != "" {
				os.RemoveAll(w.fenceDir)
			}
		}()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var tick <-chan time.Time
	if w.degraded {
		t := time.NewTicker(degradedRescan)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			wasDegraded := w.degraded
			w.event(ev)
			if !wasDegraded && w.degraded && w.opts.events != nil {
				w.opts.events.watching(w.fenceDir, true)
			}
			if !wasDegraded && w.degraded && tick == nil {
				t := time.NewTicker(degradedRescan)
				defer t.Stop()
				tick = t.C
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.error(err)
		case <-tick:
			w.rescan()
		case <-timer.C:
		}
		w.flush(time.Now())
		if d, ok := w.nextFlush(time.Now()); ok {
			timer.Reset(d)
		}
	}
}

// event records one fsnotify event.
func (w *watcher) event(ev fsnotify.Event) {
	path := filepath.Clean(ev.Name)
	if w.opts.events != nil && w.opts.events.fenceEvent(path) {
		return
	}
	if ev.Op == fsnotify.Chmod {
		return // metadata only: no content change
	}
	if !w.inRoot(path) && !w.config[path] && !w.instr[path] {
		return // a sibling of a config file outside the workspace
	}
	if w.directory(ev, path) {
		return
	}
	if strings.Contains(path, string(filepath.Separator)+".git"+string(filepath.Separator)) {
		return
	}
	w.touch(path, time.Now())
}

// directory handles the event of a watched directory: a new one is
// watched with its tree, a removed one's watch is forgotten. It reports
// whether ev was such an event.
func (w *watcher) directory(ev fsnotify.Event, path string) bool {
	if ev.Has(fsnotify.Create) && w.inRoot(path) {
		if st, err := os.Lstat(path); err == nil && st.IsDir() {
			if !w.skipDir(path, true) {
				w.addTree(path, true)
			}
			return true
		}
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && w.watched[path] {
		delete(w.watched, path) // the kernel dropped the watch
		return true
	}
	return false
}

// error handles a watcher error: an overflow means events were lost, so
// the tree is rescanned.
func (w *watcher) error(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.opts.log.Warn("file watcher events overflowed: rescanning the workspace")
		w.rescan()
		return
	}
	w.opts.log.Warn("file watcher error", "err", err)
}

// rescan re-adds missing watches and reports every file modified since the
// watcher was last in sync.
func (w *watcher) rescan() {
	since := w.synced.Add(-time.Second) // mtime granularity and clock slack
	now := time.Now()
	filepath.WalkDir(w.opts.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != w.opts.root && w.skipDir(path, false) {
				return filepath.SkipDir
			}
			w.add(path)
			return nil
		}
		if info, err := d.Info(); err == nil && !info.ModTime().Before(since) {
			w.touch(path, now.Add(-w.opts.quiet)) // due at the next flush
		}
		return nil
	})
	for f := range w.special() {
		if info, err := os.Stat(f); err == nil && !info.ModTime().Before(since) {
			w.touch(f, now.Add(-w.opts.quiet))
		}
	}
	w.synced = now
}

func (w *watcher) touch(path string, at time.Time) {
	if w.opts.events != nil && w.inRoot(path) {
		w.opts.events.changed(path)
	}
	p, ok := w.pending[path]
	if !ok {
		p.first = at
	}
	p.last = at
	w.pending[path] = p
}

// flush reports the paths that have been quiet long enough.
func (w *watcher) flush(now time.Time) {
	var files []string
	config, instr := false, false
	for path, p := range w.pending {
		if now.Sub(p.last) < w.opts.quiet && now.Sub(p.first) < watchMaxDelay {
			continue
		}
		delete(w.pending, path)
		switch {
		case w.config[path]:
			config = true
		case w.instr[path]:
			instr = true
			if w.inRoot(path) {
				files = append(files, path)
			}
		default:
			files = append(files, path)
		}
	}
	if len(w.pending) == 0 {
		w.synced = now
	}
	if config && w.opts.onConfig != nil {
		w.opts.onConfig()
	}
	if instr && w.opts.onInstructions != nil {
		w.opts.onInstructions()
	}
	if len(files) > 0 && w.opts.onFiles != nil {
		sort.Strings(files)
		w.opts.onFiles(files)
	}
}

// nextFlush returns when the next pending path is due.
func (w *watcher) nextFlush(now time.Time) (time.Duration, bool) {
	var next time.Duration
	found := false
	for _, p := range w.pending {
		d := min(p.last.Add(w.opts.quiet).Sub(now), p.first.Add(watchMaxDelay).Sub(now))
		if !found || d < next {
			next, found = d, true
		}
	}
	return max(next, time.Millisecond), found
}
