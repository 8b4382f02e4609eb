package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// infoServer is a messagesServer that also answers GET
// /v1/models/{model_id} for the models in infos (the fixture's bytes),
// 404 not_found_error for others, as Anthropic's API does; asked counts
// those questions.
func infoServer(t *testing.T, infos map[string]string, plan func(string) (int, http.Header, string)) (*messagesServer, *atomic.Int32) {
	s := &messagesServer{plan: plan}
	var asked atomic.Int32
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/models/")
		if !ok || r.Method != http.MethodGet {
			s.serve(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		body, known := infos[id]
		if !known || r.Header.Get("x-api-key") != "sk-ant-test" {
			w.WriteHeader(404)
			w.Write([]byte(`{"type":"error","error":{"type":"not_found_error","message":"model: ` + id + `"},"request_id":"req_011CT"}`))
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s, &asked
}

// What the API says of a model comes before the name rules: the window is
// max_input_tokens (not the table's 200,000), an effort the model does not
// take is lowered to one it does (Sonnet 4.6 refuses "max"), and a name
// the rules do not know (an alias) still gets adaptive thinking when the
// listing says so; the model is asked about once. A server that does not
// answer (404) leaves the name rules: a budget for an unknown name.
func TestAnthropicModelInfo(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "messages", "model_claude-sonnet-4-6.json"))
	if err != nil {
		t.Fatal(err)
	}
	infos := map[string]string{"claude-sonnet-4-6": string(b),
		"claude-sonnet-latest": strings.Replace(string(b), `"id":"claude-sonnet-4-6"`, `"id":"claude-sonnet-latest"`, 1)}
	srv, asked := infoServer(t, infos, func(string) (int, http.Header, string) { return 200, nil, msgFixture(t, "answer.sse") })
	p := anthropicProvider(t, srv, AnthropicConfig{Model: "claude-sonnet-4-6", ReasoningEffort: "max"})
	w, err := p.ContextWindow(context.Background())
	if err != nil || w.Tokens != 1000000 || !strings.Contains(w.Source, "max_input_tokens") {
		t.Errorf("window %+v, %v; want 1000000 from the listing", w, err)
	}
	for i := range 2 {
		if r := streamAnthropic(t, p, Request{ID: uint64(i + 1), Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}); r.err != nil {
			t.Fatal(r.err.Message)
		}
	}
	body := srv.last()
	if !strings.Contains(body, `"thinking":{"display":"summarized","type":"adaptive"}`) || !strings.Contains(body, `"output_config":{"effort":"high"}`) {
		t.Errorf("want adaptive thinking with effort lowered to high: %s", body)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the model was asked about %d times, want once", n)
	}
	if ok, known := p.ImagesSaid("claude-sonnet-4-6"); !ok || !known {
		t.Errorf("image_input: %v, %v", ok, known)
	}

	alias := anthropicProvider(t, srv, AnthropicConfig{Model: "claude-sonnet-latest", ReasoningEffort: "medium"})
	if r := streamAnthropic(t, alias, Request{ID: 3, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	if body := srv.last(); !strings.Contains(body, `"type":"adaptive"`) || !strings.Contains(body, `"effort":"medium"`) {
		t.Errorf("an alias the listing calls adaptive: %s", body)
	}

	unknown := anthropicProvider(t, srv, AnthropicConfig{Model: "claude-sonnet-next", ReasoningEffort: "medium"})
	if r := streamAnthropic(t, unknown, Request{ID: 4, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	if body := srv.last(); !strings.Contains(body, `"thinking":{"budget_tokens":4096,"type":"enabled"}`) {
		t.Errorf("a model the server does not describe: want the name rules' budget: %s", body)
	}
	if w, _ := unknown.ContextWindow(context.Background()); strings.Contains(w.Source, "max_input_tokens") {
		t.Errorf("a model the server does not describe has the window %+v", w)
	}
}
