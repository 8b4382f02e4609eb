package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// vllmResponses is a server speaking vLLM's Responses API for gpt-oss
// (testdata/responses/vllm_tool_turn.sse: reasoning items carry their text
// as content, encrypted_content null) and validating the input as vLLM
// does: a reasoning item needs its id and summary, and encrypted_content
// is refused.
type vllmResponses struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newVLLMResponses(t *testing.T, plan func(n int) string) *vllmResponses {
	s := &vllmResponses{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		if msg := vllmInputProblem(b); msg != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":400}`, msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, plan(n))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *vllmResponses) body(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

func vllmInputProblem(body []byte) string {
	var req struct {
		Input []map[string]json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "input is not a list of items"
	}
	for i, it := range req.Input {
		if string(it["type"]) != `"reasoning"` {
			continue
		}
		var id string
		var summary []json.RawMessage
		if json.Unmarshal(it["id"], &id) != nil || id == "" {
			return fmt.Sprintf("1 validation error: input.%d.reasoning.id Field required", i)
		}
		if it["summary"] == nil || json.Unmarshal(it["summary"], &summary) != nil {
			return fmt.Sprintf("1 validation error: input.%d.reasoning.summary Field required", i)
		}
		if _, ok := it["encrypted_content"]; ok {
			return fmt.Sprintf("input.%d: encrypted_content is not supported", i)
		}
	}
	return ""
}

// TestVLLMResponsesReasoningGoesBackInTurn: gpt-oss on vLLM's Responses
// API returns its analysis as a reasoning item with content and no
// encrypted_content. It goes back within the turn — the tool loop's next
// request — with its id, summary and content and without
// encrypted_content (vLLM accepts the request), and not in a later turn.
func TestVLLMResponsesReasoningGoesBackInTurn(t *testing.T) {
	srv := newVLLMResponses(t, func(n int) string {
		if n == 0 {
			return respFixture(t, "vllm_tool_turn.sse")
		}
		return respFixture(t, "answer.sse")
	})
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "openai/gpt-oss-20b", API: APIResponses})
	if err != nil {
		t.Fatal(err)
	}
	user := fsm.Message{Role: fsm.RoleUser, Content: "read a.txt"}
	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{user}})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	if got.reasoning != "The user wants a.txt. Call read_file." {
		t.Errorf("reasoning shown %q", got.reasoning)
	}
	loop := []fsm.Message{user,
		{Role: fsm.RoleAssistant, ToolCalls: got.done.ToolCalls, Opaque: got.done.Opaque},
		{Role: fsm.RoleTool, ToolCallID: "call_7b1e0", Content: "hello"}}
	if r := streamOnce(t, p, Request{ID: 2, Messages: loop}); r.err != nil {
		t.Fatalf("vLLM refused the tool loop's request: %s\n%s", r.err.Message, srv.body(1))
	}
	want := `{"id":"rs_9f2c1a","summary":[],"type":"reasoning","content":[{"text":"The user wants a.txt. Call read_file.","type":"reasoning_text"}]}`
	if body := srv.body(1); !strings.Contains(body, want) {
		t.Errorf("the tool loop's request does not send the reasoning item back as %s:\n%s", want, body)
	}
	later := append(append([]fsm.Message{}, loop...), fsm.Message{Role: fsm.RoleAssistant, Content: "a.txt says hello."}, fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
	if r := streamOnce(t, p, Request{ID: 3, Messages: later, TurnStart: len(later) - 1}); r.err != nil {
		t.Fatalf("a later turn: %s", r.err.Message)
	}
	if body := srv.body(2); strings.Contains(body, `"reasoning"`) && strings.Contains(body, "rs_9f2c1a") {
		t.Errorf("a later turn sends the previous turn's analysis back:\n%s", body)
	}
}
