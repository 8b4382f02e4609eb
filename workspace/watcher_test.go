package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// watchHarness runs a watcher on dir and collects its batches.
type watchHarness struct {
	w       *watcher
	batches chan []string
	configs chan struct{}
}

func startTestWatcher(t *testing.T, dir string, tweak func(*watchOptions)) *watchHarness {
	t.Helper()
	hw := &watchHarness{batches: make(chan []string, 100), configs: make(chan struct{}, 100)}
	opts := watchOptions{
		root:     dir,
		onFiles:  func(p []string) { hw.batches <- p },
		onConfig: func() { hw.configs <- struct{}{} },
	}
	if tweak != nil {
		tweak(&opts)
	}
	w, err := newWatcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	hw.w = w
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { w.run(ctx); close(stopped) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("the watcher did not stop")
		}
	})
	return hw
}

// until collects batches until one contains path, and returns how many
// times each path was reported meanwhile.
func (hw *watchHarness) until(t *testing.T, path string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	deadline := time.After(testWait)
	for {
		select {
		case b := <-hw.batches:
			for _, p := range b {
				seen[p]++
			}
			if seen[path] > 0 {
				return seen
			}
		case <-deadline:
			t.Fatalf("%s was never reported; saw %v", path, seen)
		}
	}
}

func TestWatcherDebouncesAtomicSaves(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "greet.txt")
	os.WriteFile(file, []byte("hello\n"), 0o644)
	hw := startTestWatcher(t, dir, nil)

	t.Run("tmp+rename", func(t *testing.T) {
		tmp := filepath.Join(dir, ".greet.txt.tmp123")
		os.WriteFile(tmp, []byte("v2\n"), 0o644)
		os.Rename(tmp, file)
		sentinel := filepath.Join(dir, "sentinel1")
		os.WriteFile(sentinel, nil, 0o644)
		seen := hw.until(t, sentinel)
		if seen[file] != 1 {
			t.Fatalf("greet.txt reported %d times: %v", seen[file], seen)
		}
	})
	t.Run("vim", func(t *testing.T) {
		// vim's writebackup dance: probe file, rename to backup, write the
		// new file, chmod it, delete the backup.
		probe := filepath.Join(dir, "4913")
		os.WriteFile(probe, nil, 0o644)
		os.Remove(probe)
		backup := file + "~"
		os.Rename(file, backup)
		os.WriteFile(file, []byte("v3\n"), 0o644)
		os.Chmod(file, 0o644)
		os.Remove(backup)
		sentinel := filepath.Join(dir, "sentinel2")
		os.WriteFile(sentinel, nil, 0o644)
		seen := hw.until(t, sentinel)
		if seen[file] != 1 {
			t.Fatalf("greet.txt reported %d times: %v", seen[file], seen)
		}
	})
}

func TestWatcherAddsNewDirectoriesAndSkipsIgnoredOnes(t *testing.T) {
	dir := gitRepo(t, map[string]string{".gitignore": "build/\nout/\n", "src/a.go": "package a\n"})
	dir, _ = filepath.EvalSymlinks(dir)
	os.MkdirAll(filepath.Join(dir, "build", "deep"), 0o755)
	hw := startTestWatcher(t, dir, nil)
	for _, d := range []string{".git", "build", filepath.Join("build", "deep")} {
		if hw.w.watched[filepath.Join(dir, d)] {
			t.Fatalf("%s is watched", d)
		}
	}
	if !hw.w.watched[filepath.Join(dir, "src")] {
		t.Fatal("src is not watched")
	}
	// A new ignored directory and a new tree, with a file written at once.
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	os.WriteFile(filepath.Join(dir, "out", "x.o"), nil, 0o644)
	nested := filepath.Join(dir, "new", "deeper", "f.txt")
	os.MkdirAll(filepath.Dir(nested), 0o755)
	os.WriteFile(nested, []byte("x"), 0o644)
	seen := hw.until(t, nested)
	// The directory is watched now: a later change is seen too.
	os.WriteFile(nested, []byte("y"), 0o644)
	for k, v := range hw.until(t, nested) {
		seen[k] += v
	}
	if seen[filepath.Join(dir, "out", "x.o")] != 0 {
		t.Fatalf("a file in an ignored directory was reported: %v", seen)
	}
}

func TestWatcherWatchLimitAndOverflowDegradeToARescan(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	adds := 0
	hw := startTestWatcher(t, dir, func(o *watchOptions) {
		o.addWatch = func(fsw *fsnotify.Watcher, d string) error {
			adds++
			if adds > 2 {
				return syscall.ENOSPC // the inotify watch limit
			}
			return fsw.Add(d)
		}
	})
	if !hw.w.degraded {
		t.Fatal("the watch limit did not degrade the watcher")
	}
	unwatched := filepath.Join(dir, "c", "new.txt")
	os.WriteFile(unwatched, []byte("x"), 0o644)
	// An overflow (here injected) rescans: the change is found by mtime.
	hw.w.fsw.Errors <- fsnotify.ErrEventOverflow
	hw.until(t, unwatched)
}

func TestSessionStaleFileIsRefusedAndToldToTheModel(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n", "other.txt": "other\n"})
	var editResult, note string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		last := req.Messages[len(req.Messages)-1]
		for _, m := range req.Messages {
			if strings.HasPrefix(m.Content, "[loom] changed on disk") {
				note = m.Content
			}
		}
		switch {
		case last.Content == "read and edit":
			respond(req, emit, "", call("r1", "read_file", `{"path":"greet.txt"}`), call("r2", "read_file", `{"path":"other.txt"}`))
		case last.ToolCallID == "r2":
			respond(req, emit, "", call("e1", "edit_file", `{"path":"greet.txt","old_string":"hello","new_string":"hi"}`))
		case last.Content == "edit other":
			respond(req, emit, "", call("e2", "edit_file", `{"path":"other.txt","old_string":"other","new_string":"mine"}`))
		case last.ToolCallID == "e2":
			editResult = last.Content
			respond(req, emit, "refused")
		default:
			respond(req, emit, "ok")
		}
	})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	waitReady(t, s)
	s.Ask(context.Background(), "read and edit")
	h.editor.turnEnded(t, 1)
	h.editor.waitFor(t, "the commit", func(n Notification) bool { return n.Kind == NoteCommit })
	// The user saves other.txt from another editor, atomically.
	tmp := filepath.Join(dir, ".other.txt.swp")
	os.WriteFile(tmp, []byte("other, by the user\n"), 0o644)
	os.Rename(tmp, filepath.Join(dir, "other.txt"))
	changed := h.editor.waitFor(t, "the change to be noticed", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "changed on disk")
	})
	if !strings.HasSuffix(changed.Text, ": other.txt") {
		t.Fatalf("noticed %q (the agent's own edit of greet.txt must not count)", changed.Text)
	}
	s.Ask(context.Background(), "edit other")
	h.editor.turnEnded(t, 2)
	if !strings.Contains(editResult, "changed since you last read it") {
		t.Fatalf("the stale edit was not refused: %q", editResult)
	}
	if !strings.Contains(note, "other.txt") || strings.Contains(note, "greet.txt") {
		t.Fatalf("the model was told %q", note)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "other.txt")); string(got) != "other, by the user\n" {
		t.Fatalf("other.txt = %q", got)
	}
}

func waitReady(t *testing.T, s *Conversation) {
	t.Helper()
	select {
	case <-s.folder.watchReady:
	case <-time.After(testWait):
		t.Fatal("the watcher never started")
	}
}

func TestSessionConfigReloadKeepsTheOldConfigWhenBroken(t *testing.T) {
	ed := newRecordingEditor()
	_, s, cfgFile := trustedConfigFolder(t, ed, "[agent]\nelide_after_turns = 7\n")
	os.WriteFile(cfgFile, []byte("[agent\nelide_after_turns = 8\n"), 0o644)
	ed.waitFor(t, "the broken config to be reported", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "keeping the previous configuration")
	})
	if _, err := s.Ask(context.Background(), "still works"); err != nil {
		t.Fatalf("Ask with the previous configuration: %v", err)
	}
	ed.turnEnded(t, 1)
	os.WriteFile(cfgFile, []byte("[agent]\nelide_after_turns = 9\n"), 0o644)
	ed.waitFor(t, "the reload", func(n Notification) bool {
		return n.Kind == NoteInfo && n.Text == "configuration reloaded"
	})
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if i := slices.IndexFunc(ed.notes, func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "elide_after_turns")
	}); i >= 0 {
		t.Fatalf("a valid config was reported: %q", ed.notes[i].Text)
	}
}
