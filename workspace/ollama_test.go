package workspace

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// ollamaLike is a server that behaves as Ollama does with a model loaded
// at num_ctx tokens: a prompt over that is cut silently, its oldest
// messages dropped (the system prompt kept), and usage.prompt_tokens
// counts what was kept. It says the trained window (/api/show) from the
// start, and the running one (/api/ps) once the first request loaded the
// model, unless psSays is false (an older Ollama). lost counts the
// requests whose current user request was cut away.
type ollamaLike struct {
	*llmtest.Server
	mu   sync.Mutex
	cuts int
	lost int
}

func newOllamaLike(t *testing.T, numCtx int, psSays bool) *ollamaLike {
	o := &ollamaLike{}
	o.Server = llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if psSays {
			o.Handle("/api/ps", `{"models":[{"name":"test-model:latest","model":"test-model:latest","size":6654289920,"digest":"e4b5fd7f8af0","expires_at":"2025-10-17T16:47:07.93355-07:00","size_vram":5333539264,"context_length":`+itoa(numCtx)+`}]}`)
		}
		// Its count: the whole body (messages, tools) at 4 bytes a token.
		kept, tokens := r.Messages, len(r.Body)/4
		o.mu.Lock()
		for tokens > numCtx && len(kept) > 1 {
			o.cutsOnce(&tokens, &kept)
		}
		lastUser := r.LastUser()
		found := false
		for _, m := range kept {
			if m.Role == "user" && m.Content == lastUser {
				found = true
			}
		}
		if !found {
			o.lost++
		}
		o.mu.Unlock()
		usage := &llmtest.Usage{Prompt: int64(tokens), Completion: 20}
		last := r.Last()
		switch {
		case last.Content == fsm.SummaryPrompt:
			return llmtest.Reply{Text: []string{"Goals: read big.txt per question."}, Usage: usage}
		case !found:
			return llmtest.Reply{Text: []string{"I do not know what you asked."}, Usage: usage}
		case last.Role == "user":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("c"+itoa(len(o.Requests())), "read_file", `{"path":"big.txt"}`)}, Usage: usage}
		default:
			return llmtest.Reply{Text: []string{"It holds many lines."}, Usage: usage}
		}
	})
	o.Handle("/v1/models", `{"object":"list","data":[{"id":"test-model","object":"model","created":1741570283,"owned_by":"library"}]}`)
	o.Handle("/api/show", `{"parameters":"","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`)
	return o
}

// cutsOnce drops the oldest message after the system prompt, as Ollama's
// truncation does; the caller holds o.mu.
func (o *ollamaLike) cutsOnce(tokens *int, kept *[]llmtest.Message) {
	k := *kept
	i := 0
	if k[0].Role == "system" {
		i = 1
	}
	if i >= len(k) {
		return
	}
	*tokens -= (len(k[i].Content) + 16) / 4
	*kept = append(append([]llmtest.Message(nil), k[:i]...), k[i+1:]...)
	o.cuts++
}

// Ollama runs the model with 4,096 tokens though it was trained with
// 40,960: once the first request loaded it, /api/ps says so, loom budgets
// with the smaller, and Ollama never has to cut a prompt again — the
// user's request is never lost.
func TestOllamaRunningWindowKeepsTheRequest(t *testing.T) {
	o := newOllamaLike(t, 4096, true)
	h, s := runTurns(t, o.Server, 12, nil)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lost != 0 || o.cuts != 0 {
		t.Errorf("Ollama cut %d messages and lost the user's request %d times", o.cuts, o.lost)
	}
	if st := statusOf(t, s); st.ContextWindow != 4096 || !strings.Contains(st.ContextSource, "/api/ps") {
		t.Errorf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	if h.editor.count(NoteCompacted) == 0 {
		t.Error("12 turns of ~1,100 tokens in 4,096 tokens and no compaction")
	}
}

// An Ollama that does not tell its running window (or any server that
// cuts silently): the cut shows in usage.prompt_tokens; loom says so once,
// drops the answer made without the request, compacts and goes on, and no
// later request is cut.
func TestSilentCutIsNoticedAndCompacted(t *testing.T) {
	o := newOllamaLike(t, 4096, false)
	h, s := runTurns(t, o.Server, 12, func(c *config.Config) {})
	o.mu.Lock()
	lost := o.lost
	o.mu.Unlock()
	var said int
	for _, n := range h.editor.all() {
		if strings.Contains(n.Text, "the server read only") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the cut was told %d times; want once", said)
	}
	// loom.status tells the lowered window and why, until a reset.
	if st := statusOf(t, s); st.ContextWindow > 4096 || !strings.Contains(st.ContextSource, "the server read only") || !strings.Contains(st.ContextSource, "instead of 40960") {
		t.Errorf("after the cut the status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, s); st.ContextWindow != 40960 || strings.Contains(st.ContextSource, "read only") {
		t.Errorf("after loom.reset the status says window %d from %q; want the server's 40960 again", st.ContextWindow, st.ContextSource)
	}
	if lost > 1 {
		t.Errorf("the user's request was lost %d times; want at most the one that showed the cut", lost)
	}
	for _, n := range h.editor.all() {
		if n.Kind == NoteText && strings.Contains(n.Text, "I do not know") {
			// shown, then retracted: the retraction must follow
			if h.editor.count(NoteRetract) == 0 {
				t.Error("the answer made without the request was not retracted")
			}
		}
	}
}

// all returns a copy of the notifications so far.
func (e *recordingEditor) all() []Notification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Notification(nil), e.notes...)
}
