package workspace

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// probeLog records the order in which a server was asked: discovery
// paths and chat requests.
type probeLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *probeLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

func (l *probeLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.paths...)
}

// llamaLike is a llama.cpp-like server: /props tells a 16,384-token
// window, /v1/models and /api/show answer 404, every path is logged.
func llamaLike(t *testing.T) (*llmtest.Server, *probeLog) {
	log := &probeLog{}
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		log.add("chat")
		if strings.Contains(r.LastUser(), "too long") {
			return llmtest.Reply{Status: http.StatusBadRequest, ErrorBody: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":20000,"n_ctx":16384}}`}
		}
		return llmtest.Reply{Text: []string{"ok"}}
	})
	props := `{"default_generation_settings":{"n_ctx":16384}}`
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			log.add(r.URL.Path)
		}
		if r.URL.Path == "/props" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(props))
			return
		}
		inner.ServeHTTP(w, r)
	})
	return srv, log
}

func discoveryHost(t *testing.T, stateDir string, srv *llmtest.Server) (*testHost, *Conversation) {
	t.Helper()
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.BaseURL(), Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHostIn(t, stateDir, p, func(c *config.Config) { c.Model.BaseURL = srv.BaseURL() })
	s, err := h.AddFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

// The model's window and the paths a server does not serve are
// remembered per server and model: the next start knows the window at
// once and asks nothing before its first request; after the first
// response it asks again in the background, only what the server serves.
// A context-length error forgets the window.
func TestDiscoveryIsRememberedPerServer(t *testing.T) {
	srv, log := llamaLike(t)
	state := t.TempDir()
	h, s := discoveryHost(t, state, srv)
	waitWindow(t, s)
	if st := statusOf(t, s); st.ContextWindow != 16384 || st.ContextSource != "server: /props n_ctx (llama.cpp)" {
		t.Fatalf("first start: window %d from %q", st.ContextWindow, st.ContextSource)
	}
	h.Close()
	first := log.all()

	h, s = discoveryHost(t, state, srv)
	if st := statusOf(t, s); st.ContextWindow != 16384 || st.ContextSource != "server: /props n_ctx (llama.cpp) (remembered)" {
		t.Fatalf("second start: window %d from %q", st.ContextWindow, st.ContextSource)
	}
	turn, err := s.Ask(context.Background(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, turn); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	waitWindow(t, s)
	// The refresh after the first response: wait until it is applied.
	waitFor(t, "the window asked again", func() bool { return statusOf(t, s).ContextSource == "server: /props n_ctx (llama.cpp)" })
	second := log.all()[len(first):]
	if len(second) < 2 || second[0] != "chat" || strings.Join(second[1:], " ") != "/props" {
		t.Errorf("second start asked %v; want the chat request first, then /props alone (404 paths not again)", second)
	}

	// A context-length error forgets the remembered window, and asks
	// the server again.
	asked := strings.Count(strings.Join(log.all(), " "), "/props")
	turn, _ = s.Ask(context.Background(), "something too long")
	h.editor.turnEnded(t, turn)
	waitFor(t, "the window asked again after the context error", func() bool {
		return strings.Count(strings.Join(log.all(), " "), "/props") > asked
	})
}

// waitFor waits until cond holds, polling it, for at most testWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, testWait)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
}
