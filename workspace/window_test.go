package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// waitWindow waits until the session's question to the server about the
// context window, if it asked one, is answered and applied.
func waitWindow(t *testing.T, s *Conversation) {
	t.Helper()
	var answered chan struct{}
	if err := s.folder.loop.call(context.Background(), func() { answered = s.folder.window.server.answered }); err != nil {
		t.Fatal(err)
	}
	if answered == nil {
		return
	}
	select {
	case <-answered:
	case <-time.After(testWait):
		t.Fatal("the server's context window was never applied")
	}
	// The folder published it before closing answered; the conversation
	// applies it in order, before this call.
	if err := s.loop.call(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
}

// vllmModelsOf is vLLM's GET /v1/models answer for one model.
func vllmModelsOf(model string, maxLen int) string {
	return `{"object":"list","data":[{"id":"` + model + `","object":"model","created":1741570283,"owned_by":"vllm","root":"/models/m","parent":null,"max_model_len":` + itoa(maxLen) + `,"permission":[]}]}`
}

func itoa(n int) string { return fmt.Sprint(n) }

// With model.context_window unset, the session asks the server (here
// vLLM's /v1/models) and keeps every request under the window it
// reports: the server rejects, with OpenAI's context-length error, any
// request over it, and none is rejected. loom.status says where the
// window comes from.
func TestContextWindowAskedFromTheServer(t *testing.T) {
	const window = 6000
	srv, rejected := limitedServer(t, window)
	srv.Handle("/v1/models", vllmModelsOf("test-model", window))
	h, s := runTurns(t, srv, 20, nil)
	if *rejected != 0 {
		t.Errorf("the server rejected %d requests as over its window", *rejected)
	}
	st := statusOf(t, s)
	if st.ContextWindow != window || st.ContextSource != "server: /v1/models max_model_len (vLLM)" {
		t.Fatalf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	if h.editor.count(NoteCompacted) == 0 {
		t.Fatal("20 turns of ~1,100 tokens in a 6,000-token window, and no compaction")
	}
}

// A server that says nothing leaves the fallback, and says so.
func TestContextWindowFallsBackWhenTheServerSaysNothing(t *testing.T) {
	srv, _ := limitedServer(t, 0)
	_, s := runTurns(t, srv, 1, nil)
	if st := statusOf(t, s); st.ContextWindow != llm.DefaultContextWindow || st.ContextSource != "default (set model.context_window)" {
		t.Fatalf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	_, s = runTurns(t, srv, 1, func(c *config.Config) { c.Model.Name = "gpt-4o-mini" })
	if st := statusOf(t, s); st.ContextWindow != 128000 || st.ContextSource != "known window of gpt-4o-mini" {
		t.Fatalf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
}

// slowProber is a model whose server takes its time to tell its window.
type slowProber struct {
	funcProvider
	release chan struct{}
}

func (p slowProber) ContextWindow(ctx context.Context) (llm.Window, error) {
	select {
	case <-p.release:
		return llm.Window{Tokens: 4096, Source: "server: slow"}, nil
	case <-ctx.Done():
		return llm.Window{}, ctx.Err()
	}
}

// The question never holds up a prompt: the first turn runs with the
// fallback window while the server has not answered, and the answer
// reaches the state machine as a journaled configuration change.
func TestContextWindowQuestionDoesNotBlockThePrompt(t *testing.T) {
	p := slowProber{funcProvider: funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		respond(req, emit, "ok")
	}), release: make(chan struct{})}
	h := newTestHostIn(t, t.TempDir(), p, nil)
	s, _ := h.AddFolder(t.TempDir())
	if _, err := s.Ask(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, 1); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn 1 ended %s", end.Outcome)
	}
	if st := statusOf(t, s); st.ContextWindow != llm.DefaultContextWindow || st.ContextSource != "default (set model.context_window) (asking the server)" {
		t.Fatalf("while asking, status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	close(p.release)
	waitWindow(t, s)
	if st := statusOf(t, s); st.ContextWindow != 4096 || st.ContextSource != "server: slow" {
		t.Fatalf("status says window %d from %q", st.ContextWindow, st.ContextSource)
	}
	var got int
	s.loop.call(context.Background(), func() { got = s.machineConfig().ContextWindow })
	if got != 4096 {
		t.Fatalf("the machine's window is %d", got)
	}
	// The journal recorded the change: a replay of it ends with the
	// server's window.
	path := journalFile(s.folder.host.stateDir, s.folder.dir, s.folder.log)
	h.Close()
	cfg := lastJournaledConfig(t, path)
	if cfg.ContextWindow != 4096 {
		t.Fatalf("the journal's last configuration has window %d", cfg.ContextWindow)
	}
}

// lastJournaledConfig returns the last machine configuration recorded in
// the journal at path.
func lastJournaledConfig(t *testing.T, path string) fsm.Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last *fsm.Config
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			T      string      `json:"t"`
			Config *fsm.Config `json:"config"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.T == "config" && rec.Config != nil {
			last = rec.Config
		}
	}
	if last == nil {
		t.Fatalf("no configuration in %s", path)
	}
	return *last
}
