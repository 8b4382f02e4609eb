package workspace

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestOllamaRunningWindowKnownWhenTheTurnEnds: Ollama runs the model with
// 4,096 tokens (/api/ps, which answers slowly, as a busy server does),
// trained with 40,960 (/api/show): loom.status right after the first turn
// says 4,096 — the window the server runs is asked before the turn goes
// on, not in the background after it.
func TestOllamaRunningWindowKnownWhenTheTurnEnds(t *testing.T) {
	o := newOllamaLike(t, 4096, true)
	target, _ := url.Parse(o.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ps" {
			time.Sleep(1500 * time.Millisecond) // a busy server's latency
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "big.txt"), []byte("a small file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	provider, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: slow.URL + "/v1", Model: "test-model", IdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, provider, nil)
	s, _ := h.AddFolder(folder)
	waitWindow(t, s)
	turn, err := s.Ask(context.Background(), "what is in big.txt?")
	if err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, turn); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s: %q", end.Outcome, h.editor.errors())
	}
	if st := statusOf(t, s); st.ContextWindow != 4096 || !strings.Contains(st.ContextSource, "/api/ps") {
		t.Fatalf("right after the turn, status says window %d from %q; the server runs 4096", st.ContextWindow, st.ContextSource)
	}
}
