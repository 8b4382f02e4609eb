package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestOwnWriteEchoBeforeItsReadRecord: the watcher may see loom's own
// write of a file (an accepted hunk written on disk) before the model's
// read record holds the new text; that echo is neither stale nor news,
// while another file's change, and then the user's change of the same
// file, are.
func TestOwnWriteEchoBeforeItsReadRecord(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "old\n", "b.txt": "b\n"})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) { respond(req, emit, "ok") })
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	waitReady(t, s)
	a, b := filepath.Join(s.folder.dir, "a.txt"), filepath.Join(s.folder.dir, "b.txt")
	s.reads.Record(a, []byte("old\n"))
	s.reads.Record(b, []byte("b\n"))
	changed := func(rel string) func(Notification) bool {
		return func(n Notification) bool {
			return n.Kind == NoteInfo && strings.Contains(n.Text, "changed on disk") && strings.HasSuffix(n.Text, rel)
		}
	}
	// As applyEdit: expected, written, and the echo comes first.
	s.writes.expect(a, []byte("new\n"))
	writeTestFile(t, a, "new\n")
	s.filesChanged([]string{a})
	// b.txt, changed by someone else, is news: once told, the echo of
	// a.txt (handled before) would have been told too.
	writeTestFile(t, b, "b by the user\n")
	s.filesChanged([]string{b})
	h.editor.waitFor(t, "b.txt's change", changed("b.txt"))
	h.editor.mu.Lock()
	for _, n := range h.editor.notes {
		if changed("a.txt")(n) {
			h.editor.mu.Unlock()
			t.Fatalf("loom's own write of a.txt was news: %q", n.Text)
		}
	}
	h.editor.mu.Unlock()
	s.reads.Record(a, []byte("new\n")) // as applyEdit, after the write
	// The user's change of a.txt afterwards is news.
	writeTestFile(t, a, "by the user\n")
	s.filesChanged([]string{a})
	h.editor.waitFor(t, "a.txt's change by the user", changed("a.txt"))
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadAfterTheWatcherLookedIsNotStale: the watcher found a file
// changed since the model read it, but before its note was stepped the
// model read the file again: the model is not told to read again what it
// has just read (a stale note made the model distrust a fresh file).
func TestReadAfterTheWatcherLookedIsNotStale(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "old\n"})
	var mu sync.Mutex
	var told []string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		mu.Lock()
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "changed on disk since you read them") {
				told = append(told, m.Content)
			}
		}
		mu.Unlock()
		respond(req, emit, "ok")
	})
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	waitReady(t, s)
	a := filepath.Join(s.folder.dir, "a.txt")
	s.reads.Record(a, []byte("old\n"))
	writeTestFile(t, a, "new\n")
	// The owner goroutine is busy while the watcher looks; the model's
	// read of the new text completes before the note would be stepped.
	release := make(chan struct{})
	busy := make(chan struct{})
	s.loop.post(func() { close(busy); <-release })
	<-busy
	s.filesChanged([]string{a})
	s.reads.Record(a, []byte("new\n"))
	close(release)
	turn, err := s.Ask(context.Background(), "go on")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, turn)
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 0 {
		t.Fatalf("the model was told a file it had just read changed: %q", told)
	}
}
