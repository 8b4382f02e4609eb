package workspace

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// A switched model is journaled: the resumed conversation asks it too.
func TestSetModelSurvivesResume(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	model := func() llm.Provider {
		return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
			mu.Lock()
			asked = append(asked, req.Model)
			mu.Unlock()
			respond(req, emit, "ok")
		})
	}
	state, folder := t.TempDir(), t.TempDir()
	h1 := newTestHostIn(t, state, model(), nil)
	s1, _ := h1.AddFolder(folder)
	if now, err := s1.Controls().SetModel(context.Background(), "big-coder"); err != nil || now != "big-coder" {
		t.Fatalf("SetModel = %q, %v", now, err)
	}
	s1.Ask(context.Background(), "first")
	h1.editor.turnEnded(t, 1)
	h1.Close()

	h2 := newTestHostIn(t, state, model(), nil)
	s2, _ := h2.AddFolder(folder)
	h2.editor.waitFor(t, "the resume note", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "resumed")
	})
	s2.Ask(context.Background(), "second")
	h2.editor.turnEnded(t, 2)
	st, _ := s2.Status(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, ",") != "big-coder,big-coder" || st.Model != "big-coder" {
		t.Fatalf("asked %v, status model %q; want big-coder throughout", asked, st.Model)
	}
	// Back to the configured model ("" or its name).
	if now, err := s2.Controls().SetModel(context.Background(), "test-model"); err != nil || now != "test-model" {
		t.Fatalf("SetModel back = %q, %v", now, err)
	}
}
