package workspace

import (
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// textEditor tells when a turn ended and keeps the texts streamed.
type textEditor struct {
	turnEditor
	mu    sync.Mutex
	texts []string
}

func (e *textEditor) Notify(n Notification) {
	if n.Kind == NoteText {
		e.mu.Lock()
		e.texts = append(e.texts, n.Text)
		e.mu.Unlock()
	}
	e.turnEditor.Notify(n)
}

// TestLMStudioEmptyOverflowCompacts: LM Studio's GGUF engine answers a
// prompt past its loaded context (4096 here) with HTTP 200 and nothing
// (its own bytes: lmstudio-bug-tracker #2339). loom takes that for a
// context overflow: it compacts and resends, and the turn ends with the
// answer — not "done" with nothing said.
func TestLMStudioEmptyOverflowCompacts(t *testing.T) {
	srv := llmtest.NewDialectServer(t, "lmstudio", func(n int, _ llmtest.Request) string {
		if n == 1 {
			return "empty_overflow"
		}
		return "answer"
	})
	ed := &textEditor{turnEditor: turnEditor{ended: make(chan uint64, 1)}}
	opts := benchHostOptions(ed, srv.URL, func(cfg *config.Config) { cfg.Model.ContextWindow = 4096 })
	opts.StateDir = t.TempDir()
	h := NewHost(opts)
	t.Cleanup(h.Close)
	s, err := h.AddFolder(benchFolder(t, map[string]string{"a.txt": "hello\n"}))
	if err != nil {
		t.Fatal(err)
	}
	askAndWait(t, s, ed.ended, "what does a.txt say?")
	askAndWait(t, s, ed.ended, "and again?")
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests; want 4 (turn 1, the empty answer, the compaction, the resent request)", len(reqs))
	}
	if last := reqs[2].Last(); last.Content != fsm.SummaryPrompt {
		t.Errorf("the request after the empty answer is not the compaction: %q", last.Content)
	}
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if got := strings.Join(ed.texts, ""); got != "a.txt says hello.a.txt says hello." {
		t.Errorf("texts shown %q; want the answer of each turn", got)
	}
}
