package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// contextLengthBody is OpenAI's own answer to a request over the window.
const contextLengthBody = `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

// limitedServer is a scripted OpenAI-compatible server that counts a
// request's tokens as its body's bytes / 4 and rejects, with OpenAI's
// context-length error, every request over limit. Each user turn makes
// the model read big.txt and then answer; a compaction request gets a
// summary. It reports usage as the server's own count.
func limitedServer(t *testing.T, limit int) (*llmtest.Server, *int) {
	rejected := new(int)
	var srv *llmtest.Server
	srv = llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		tokens := int64(len(r.Body) / 4)
		if limit > 0 && tokens > int64(limit) {
			*rejected++
			return llmtest.Reply{Status: 400, ErrorBody: fmt.Sprintf(contextLengthBody, limit, tokens)}
		}
		usage := &llmtest.Usage{Prompt: tokens, Completion: 40}
		last := r.Last()
		switch {
		case last.Content == fsm.SummaryPrompt:
			return llmtest.Reply{Text: []string{"Goals: read big.txt once per question. Decisions: none. Files changed: none. Open problems: none."}, Usage: usage}
		case last.Role == "user":
			return llmtest.Reply{Text: []string{"Reading it."}, ToolCalls: []llmtest.ToolCall{llmtest.Call(fmt.Sprintf("call_%d", len(srv.Requests())), "read_file", `{"path":"big.txt"}`)}, Usage: usage}
		default:
			return llmtest.Reply{Text: []string{"It holds ", "many lines."}, Usage: usage}
		}
	})
	return srv, rejected
}

// runTurns asks n questions of a session on srv and returns, for each
// turn, the body size of its first request.
func runTurns(t *testing.T, srv *llmtest.Server, n int, tweak func(*config.Config)) (*testHost, *Conversation) {
	t.Helper()
	folder := t.TempDir()
	big := strings.Repeat("a line of big.txt, read again and again by the model\n", 80) // ~4 KB
	if err := os.WriteFile(filepath.Join(folder, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	provider, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.BaseURL(), Model: "test-model", IdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, provider, tweak)
	s, _ := h.AddFolder(folder)
	waitWindow(t, s)
	for i := 1; i <= n; i++ {
		turn, err := s.Ask(context.Background(), fmt.Sprintf("question %d: what is in big.txt?", i))
		if err != nil {
			t.Fatal(err)
		}
		if end := h.editor.turnEnded(t, turn); end.Outcome != fsm.TurnDone {
			t.Fatalf("turn %d ended %s: %q", turn, end.Outcome, h.editor.errors())
		}
	}
	return h, s
}

// A session that needs ten times the model's context window completes,
// and no request passes the window: old tool results are elided and the
// conversation is compacted before it would.
func TestSessionOfTenWindowsStaysUnderBudget(t *testing.T) {
	const window = 6000
	srv, rejected := limitedServer(t, window)
	h, s := runTurns(t, srv, 60, func(c *config.Config) { c.Model.ContextWindow = window })
	var total int64
	for i, r := range srv.Requests() {
		tokens := int64(len(r.Body) / 4)
		total += tokens
		if tokens > window {
			t.Errorf("request %d: %d tokens, over the %d-token window", i+1, tokens, window)
		}
	}
	if *rejected != 0 {
		t.Errorf("the server rejected %d requests as over its context length", *rejected)
	}
	compactions := h.editor.count(NoteCompacted)
	if compactions == 0 {
		t.Fatal("60 turns of ~1,100 tokens each in a 6,000-token window, and no compaction")
	}
	if conv := 60 * 1100; conv < 10*window {
		t.Fatalf("the session needs %d tokens, not 10x the window", conv)
	}
	msgs, _ := s.History(context.Background())
	if err := fsm.CheckPairing(msgs); err != nil {
		t.Fatalf("history after compactions: %v", err)
	}
	if !strings.Contains(msgs[1].Content, "Goals:") {
		t.Fatalf("the summary is not in the history: %q", msgs[1].Content)
	}
	st, _ := s.Status(context.Background())
	if st.ContextWindow != window || st.ContextSource != "model.context_window" {
		t.Fatalf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	t.Logf("%d requests, %d compactions, %d tokens sent in all", len(srv.Requests()), compactions, total)
}

// A window the client does not know is too big (the server's is
// smaller): the server's context-length error compacts the conversation
// and the request is retried, and the turn succeeds.
func TestContextLengthErrorCompactsAndRetries(t *testing.T) {
	const limit = 6000
	srv, rejected := limitedServer(t, limit)
	h, _ := runTurns(t, srv, 25, func(c *config.Config) { c.Model.ContextWindow = 1000000 })
	if *rejected == 0 {
		t.Fatal("the server never rejected a request: the test did not reach its limit")
	}
	if h.editor.count(NoteCompacted) == 0 {
		t.Fatal("no compaction after a context-length error")
	}
}

// TestRequestSizeFigures prints, for a 200-turn session, the request
// size at turns 1, 50, 100 and 200 with and without compaction
// (LOOM_CONTEXT_FIGURES=1; it is slow).
func TestRequestSizeFigures(t *testing.T) {
	if os.Getenv("LOOM_CONTEXT_FIGURES") == "" {
		t.Skip("set LOOM_CONTEXT_FIGURES=1")
	}
	for _, c := range []struct {
		name   string
		window int
		elide  int
	}{
		{"elision + compaction (window 8192)", 8192, 3},
		{"elision + compaction (window 32768)", 32768, 3},
		{"elision, no compaction (window 10M)", 10000000, 3},
		{"neither (window 10M, elide_after_turns 0)", 10000000, 0},
	} {
		srv, _ := limitedServer(t, 0)
		runTurns(t, srv, 200, func(cfg *config.Config) {
			cfg.Model.ContextWindow, cfg.Agent.ElideAfterTurns = c.window, c.elide
		})
		var sizes []string
		turn := 0
		for _, r := range srv.Requests() {
			if r.Last().Role == "user" && r.Last().Content != fsm.SummaryPrompt {
				turn++
				if turn == 1 || turn == 50 || turn == 100 || turn == 200 {
					sizes = append(sizes, fmt.Sprintf("turn %d: %d bytes", turn, len(r.Body)))
				}
			}
		}
		t.Logf("%s: %s", c.name, strings.Join(sizes, ", "))
	}
}

// count returns how many notifications of kind the editor got.
func (e *recordingEditor) count(kind NotificationKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, x := range e.notes {
		if x.Kind == kind {
			n++
		}
	}
	return n
}

// errors returns the texts of the error notifications.
func (e *recordingEditor) errors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, x := range e.notes {
		if x.Kind == NoteError {
			out = append(out, x.Text)
		}
	}
	return out
}
