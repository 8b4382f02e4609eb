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

// TestReadDropsTheNoteOfTheChangeItRead: a file changed on disk while the
// model streamed; the model then reads it: the pending "changed on disk"
// note is dropped (the read is fresh), so the next request does not tell
// the model to read again what it has just read.
func TestReadDropsTheNoteOfTheChangeItRead(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "old\n"})
	var mu sync.Mutex
	var told []string
	var requests int
	var s *Conversation
	changed, goOn := make(chan struct{}), make(chan struct{})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		mu.Lock()
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "changed on disk since you read them") {
				told = append(told, m.Content)
			}
		}
		requests++
		first := requests == 1
		mu.Unlock()
		if !first {
			respond(req, emit, "ok")
			return
		}
		// While the model streams: the file changes, and the note is
		// stepped before the read.
		if err := os.WriteFile(filepath.Join(s.folder.dir, "a.txt"), []byte("new\n"), 0o644); err != nil {
			t.Error(err)
		}
		s.filesChanged([]string{filepath.Join(s.folder.dir, "a.txt")})
		close(changed)
		select {
		case <-goOn:
		case <-ctx.Done():
		}
		respond(req, emit, "", call("r1", "read_file", `{"path":"a.txt"}`))
	})
	h := newTestHost(t, model, nil)
	s, _ = h.AddFolder(dir)
	waitReady(t, s)
	s.reads.Record(filepath.Join(s.folder.dir, "a.txt"), []byte("old\n"))
	turn, err := s.Ask(context.Background(), "read a.txt")
	if err != nil {
		t.Fatal(err)
	}
	<-changed
	h.editor.waitFor(t, "the change's note", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "changed on disk") && strings.HasSuffix(n.Text, "a.txt")
	})
	close(goOn)
	h.editor.turnEnded(t, turn)
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 0 {
		t.Fatalf("the model was told a file it had just read changed: %q", told)
	}
}

// TestReadOvertakenByAChangeIsNotFresh: a read_file call read the file,
// then the file changed and the watcher saw it before the call
// completed: the read is not fresh (the note of the change stays), and
// asking says so without reading the file again; a read that nothing
// overtook is fresh.
func TestReadOvertakenByAChangeIsNotFresh(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "old\n", "b.txt": "b\n"})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) { respond(req, emit, "ok") })
	h := newTestHost(t, model, nil)
	s, _ := h.AddFolder(dir)
	waitReady(t, s)
	a, b := filepath.Join(s.folder.dir, "a.txt"), filepath.Join(s.folder.dir, "b.txt")
	readA, readB := call("r1", "read_file", `{"path":"a.txt"}`), call("r2", "read_file", `{"path":"b.txt"}`)
	// As read_file: the model read both.
	s.reads.Record(a, []byte("old\n"))
	s.reads.Record(b, []byte("b\n"))
	if got := s.fresh.freshlyRead(readB, false); len(got) != 1 || got[0] != "b.txt" {
		t.Fatalf("a read nothing overtook: freshlyRead = %q, want [b.txt]", got)
	}
	if got := s.fresh.freshlyRead(readB, true); got != nil {
		t.Fatalf("a failed read: freshlyRead = %q, want none", got)
	}
	writeTestFile(t, a, "new\n")
	s.filesChanged([]string{a})
	if got := s.fresh.freshlyRead(readA, false); got != nil {
		t.Fatalf("a read the watcher saw overtaken: freshlyRead = %q, want none", got)
	}
	// The user puts the text back: what the model read stands again.
	writeTestFile(t, a, "old\n")
	s.filesChanged([]string{a})
	if got := s.fresh.freshlyRead(readA, false); len(got) != 1 {
		t.Fatalf("a file back to what was read: freshlyRead = %q, want [a.txt]", got)
	}
}
