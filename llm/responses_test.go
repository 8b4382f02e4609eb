package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// responsesServer is a real HTTP server speaking the Responses API's
// streaming wire format (the fixtures in testdata/responses) and
// refusing, as OpenAI does, a stateless request that refers to stored
// items or answers a call it never made.
type responsesServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	paths  []string
	plan   func(path string, body map[string]json.RawMessage) (status int, header http.Header, payload string)
}

func newResponsesServer(t *testing.T, plan func(path string, body map[string]json.RawMessage) (int, http.Header, string)) *responsesServer {
	s := &responsesServer{plan: plan}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *responsesServer) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, 400)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/responses") {
		if msg := validateStateless(body); msg != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":"input","code":null}}`, msg)
			return
		}
	}
	status, h, payload := s.plan(r.URL.Path, body)
	for k, v := range h {
		w.Header()[k] = v
	}
	if status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, payload)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, payload)
}

func (s *responsesServer) last() (path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths[len(s.paths)-1], s.bodies[len(s.bodies)-1]
}

// validateStateless refuses what OpenAI refuses with store false: an item
// with an id (items are not persisted: "Item with id 'rs_…' not found"),
// a reasoning item without its encrypted content, a function_call_output
// whose call_id no earlier function_call has.
func validateStateless(body map[string]json.RawMessage) string {
	if string(body["store"]) != "false" {
		return "this test server wants store: false"
	}
	if string(body["stream"]) != "true" {
		return "this test server wants stream: true"
	}
	var input []map[string]json.RawMessage
	if err := json.Unmarshal(body["input"], &input); err != nil {
		return "input is not a list of items"
	}
	calls := map[string]bool{}
	for i, it := range input {
		var typ, callID string
		json.Unmarshal(it["type"], &typ)
		json.Unmarshal(it["call_id"], &callID)
		if id, ok := it["id"]; ok {
			return fmt.Sprintf("Item with id %s not found. Items are not persisted when `store` is set to false. (input[%d])", id, i)
		}
		switch typ {
		case "reasoning":
			if len(it["encrypted_content"]) == 0 {
				return fmt.Sprintf("input[%d]: a reasoning item without encrypted_content", i)
			}
		case "function_call":
			calls[callID] = true
		case "function_call_output":
			if !calls[callID] {
				return fmt.Sprintf("No tool call found for function call output with call_id %s.", callID)
			}
		}
	}
	return ""
}

func respFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func responsesProvider(t *testing.T, srv *responsesServer, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "gpt-5.5"
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The reasoning item of tool_turn.sse as it must go back: the server's
// bytes, less its id.
const wantReasoningItem = `{"type":"reasoning","encrypted_content":"gAAAAABor1Zq3k9Xq-ENCRYPTED-1+/==","summary":[{"type":"summary_text","text":"**Reading the file**\n\nThe user wants a.txt <and> the list."},{"type":"summary_text","text":"Two calls at once."}]}`

// TestResponsesToolTurnAndLaterTurn: a tool turn, the tool loop's next
// request, and a later turn over the Responses API. The reasoning items
// go back byte for byte before the calls they led to, within the turn and
// across turns; the summary shows as reasoning; usage keeps cached and
// reasoning tokens; the request is stateless, with the effort, a summary,
// max_output_tokens, prompt_cache_key and no temperature for a reasoning
// model.
func TestResponsesToolTurnAndLaterTurn(t *testing.T) {
	n := 0
	srv := newResponsesServer(t, func(path string, _ map[string]json.RawMessage) (int, http.Header, string) {
		n++
		if n == 1 {
			return 200, nil, respFixture(t, "tool_turn.sse")
		}
		return 200, nil, respFixture(t, "answer.sse")
	})
	temp := 0.2
	p := responsesProvider(t, srv, OpenAIConfig{API: APIResponses, ReasoningEffort: "high", MaxTokens: 4096, Temperature: &temp, CacheKeys: true})
	user := fsm.Message{Role: fsm.RoleUser, Content: "read a.txt and list the files"}
	sys := fsm.Message{Role: fsm.RoleSystem, Content: "You are loom."}

	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{sys, user}, CacheKey: "conv-1",
		Tools: []ToolSchema{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	path, body := srv.last()
	if path != "/v1/responses" {
		t.Errorf("path %s", path)
	}
	for _, want := range []string{`"store":false`, `"include":["reasoning.encrypted_content"]`, `"max_output_tokens":4096`,
		`"prompt_cache_key":"conv-1"`, `"reasoning":{"effort":"high","summary":"auto"}`, `"strict":false`, `"type":"function"`,
		`{"content":"You are loom.","role":"system"}`, `"stream":true`} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}
	if strings.Contains(body, "temperature") {
		t.Errorf("a reasoning model was sent a temperature: %s", body)
	}
	if want := "**Reading the file**\n\nThe user wants a.txt <and> the list.\n\nTwo calls at once."; got.reasoning != want {
		t.Errorf("reasoning %q; want %q", got.reasoning, want)
	}
	calls := got.done.ToolCalls
	if len(calls) != 2 || calls[0] != (fsm.ToolCall{ID: "call_Rk3mX8", Name: "read_file", Arguments: `{"path":"a.txt"}`}) ||
		calls[1] != (fsm.ToolCall{ID: "call_Pq7Zt2", Name: "list_files", Arguments: `{"path":"."}`}) {
		t.Fatalf("calls %+v", calls)
	}
	u := got.done.Usage
	if u.PromptTokens != 1200 || u.CompletionTokens != 96 || u.CachedTokens == nil || *u.CachedTokens != 1024 || u.ReasoningTokens == nil || *u.ReasoningTokens != 64 {
		t.Errorf("usage %+v", u)
	}
	if got.done.FinishReason != "tool_calls" {
		t.Errorf("finish %q", got.done.FinishReason)
	}
	if got.done.Opaque != (fsm.Opaque{API: "responses", Data: "[" + wantReasoningItem + "]"}) {
		t.Errorf("opaque %+v", got.done.Opaque)
	}

	// The tool loop: the reasoning item goes back before its calls.
	asst := fsm.Message{Role: fsm.RoleAssistant, ToolCalls: calls, Opaque: got.done.Opaque}
	loop := []fsm.Message{sys, user, asst,
		{Role: fsm.RoleTool, ToolCallID: calls[0].ID, Content: "hello"},
		{Role: fsm.RoleTool, ToolCallID: calls[1].ID, Content: "a.txt"}}
	ans := streamOnce(t, p, Request{ID: 2, Messages: loop, TurnStart: 1})
	if ans.err != nil {
		t.Fatalf("the tool loop's request was refused: %s", ans.err.Message)
	}
	_, body = srv.last()
	wantSeq := wantReasoningItem + `,{"arguments":"{\"path\":\"a.txt\"}","call_id":"call_Rk3mX8","name":"read_file","type":"function_call"},{"arguments":"{\"path\":\".\"}","call_id":"call_Pq7Zt2","name":"list_files","type":"function_call"},{"output":"hello","call_id":"call_Rk3mX8","type":"function_call_output"}`
	if !strings.Contains(body, wantSeq) {
		t.Errorf("the tool loop's input lacks the reasoning item then the calls then the outputs:\n%s\nwant within it:\n%s", body, wantSeq)
	}
	if ans.text != "a.txt says hello." || ans.done.Usage.CachedTokens == nil || *ans.done.Usage.CachedTokens != 1280 {
		t.Errorf("answer %q usage %+v", ans.text, ans.done.Usage)
	}

	// A later turn: both turns' reasoning items go back unchanged.
	next := append(append([]fsm.Message(nil), loop...),
		fsm.Message{Role: fsm.RoleAssistant, Content: ans.text, Opaque: ans.done.Opaque},
		fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
	if r := streamOnce(t, p, Request{ID: 3, Messages: next, TurnStart: len(next) - 1}); r.err != nil {
		t.Fatalf("a later turn was refused: %s", r.err.Message)
	}
	_, body = srv.last()
	if !strings.Contains(body, wantReasoningItem) ||
		!strings.Contains(body, `{"type":"reasoning","encrypted_content":"gAAAAABor1Zr-ENCRYPTED-2==","summary":[]},{"content":"a.txt says hello.","role":"assistant"},{"content":"thanks","role":"user"}`) {
		t.Errorf("a later turn does not send both reasoning items back in place: %s", body)
	}
}

// TestResponsesErrors: each failure is classified: HTTP errors with the
// server's words, a response.failed and an error event mid-stream (the
// partial text kept), a stream cut before response.completed.
func TestResponsesErrors(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		header    http.Header
		payload   string
		kind      fsm.ErrorKind
		retryable bool
		after     time.Duration
		partial   string
		words     string
	}{
		{"401", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-proj-****1234.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			fsm.ErrorAuth, false, 0, "", "Incorrect API key"},
		{"429", 429, http.Header{"Retry-After": {"2"}}, `{"error":{"message":"Rate limit reached for gpt-5.5 on tokens per min (TPM).","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			fsm.ErrorRateLimited, true, 2 * time.Second, "", "Rate limit reached"},
		{"503 overloaded", 503, nil, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`,
			fsm.ErrorServer, true, 0, "", "overloaded"},
		{"400 context", 400, nil, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
			fsm.ErrorContextLength, false, 0, "", "context window"},
		{"response.failed", 200, nil, respFixture(t, "failed.sse"), fsm.ErrorServer, true, 0, "Partial", "had an error"},
		{"error event", 200, nil, respFixture(t, "error_event.sse"), fsm.ErrorContextLength, false, 0, "", "context window"},
		{"truncated", 200, nil, respFixture(t, "truncated.sse"), fsm.ErrorStream, true, 0, "Half an ans", "before response.completed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newResponsesServer(t, func(string, map[string]json.RawMessage) (int, http.Header, string) {
				return c.status, c.header, c.payload
			})
			p := responsesProvider(t, srv, OpenAIConfig{API: APIResponses})
			r := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}})
			if r.err == nil {
				t.Fatal("no error")
			}
			if r.err.Kind != c.kind || r.err.Retryable != c.retryable || r.err.RetryAfter != c.after {
				t.Errorf("kind %s retryable %v after %s; want %s %v %s (%s)", r.err.Kind, r.err.Retryable, r.err.RetryAfter, c.kind, c.retryable, c.after, r.err.Message)
			}
			if r.text != c.partial || !strings.Contains(r.err.Message, c.words) {
				t.Errorf("partial %q message %q", r.text, r.err.Message)
			}
		})
	}
}

// TestResponsesOnlyModelSwitches: a model that Chat Completions refuses
// with OpenAI's 404 "only supported in v1/responses" is asked again over
// the Responses API, and from then on directly; with model.api = "chat"
// set, the error names the Responses API instead.
func TestResponsesOnlyModelSwitches(t *testing.T) {
	srv := newResponsesServer(t, func(path string, _ map[string]json.RawMessage) (int, http.Header, string) {
		if strings.HasSuffix(path, "/chat/completions") {
			return 404, nil, `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}`
		}
		return 200, nil, respFixture(t, "answer.sse")
	})
	p := responsesProvider(t, srv, OpenAIConfig{Model: "gpt-5.5-pro"})
	req := Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}
	if r := streamOnce(t, p, req); r.err != nil || r.text != "a.txt says hello." {
		t.Fatalf("text %q err %v", r.text, r.err)
	}
	if p.API("") != APIResponses {
		t.Errorf("API %q after the 404", p.API(""))
	}
	srv.mu.Lock()
	before := len(srv.paths)
	srv.mu.Unlock()
	streamOnce(t, p, req)
	if path, _ := srv.last(); path != "/v1/responses" || len(srv.paths) != before+1 {
		t.Errorf("the next request went to %s (%d requests)", path, len(srv.paths)-before)
	}

	chat := responsesProvider(t, srv, OpenAIConfig{Model: "gpt-5.5-pro", API: APIChat})
	r := streamOnce(t, chat, req)
	if r.err == nil || r.err.Kind != fsm.ErrorNotFound || !strings.Contains(r.err.Message, `model.api = "responses"`) {
		t.Errorf("with api = chat: %+v", r.err)
	}
}

// TestResponsesSummaryRefused: an organization that may not have
// reasoning summaries gets its answer without them.
func TestResponsesSummaryRefused(t *testing.T) {
	srv := newResponsesServer(t, func(_ string, body map[string]json.RawMessage) (int, http.Header, string) {
		if strings.Contains(string(body["reasoning"]), "summary") {
			return 400, nil, `{"error":{"message":"Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.","type":"invalid_request_error","param":"reasoning.summary","code":"unsupported_value"}}`
		}
		return 200, nil, respFixture(t, "answer.sse")
	})
	p := responsesProvider(t, srv, OpenAIConfig{API: APIResponses})
	req := Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}
	for i := 0; i < 2; i++ {
		if r := streamOnce(t, p, req); r.err != nil {
			t.Fatalf("request %d: %s", i, r.err.Message)
		}
	}
	if n := len(srv.paths); n != 3 {
		t.Errorf("%d requests; want 3 (one refused, then none asks for summaries)", n)
	}
}

// TestDefaultAPI: OpenAI's reasoning and Codex models on api.openai.com
// use the Responses API, Anthropic's API the Messages API, the rest Chat
// Completions.
func TestDefaultAPI(t *testing.T) {
	for _, c := range []struct{ url, model, want string }{
		{"https://api.openai.com/v1", "gpt-5.5", APIResponses},
		{"https://api.openai.com/v1", "o3-pro", APIResponses},
		{"https://api.openai.com/v1", "codex-mini-latest", APIResponses},
		{"https://api.openai.com/v1", "gpt-4.1", APIChat},
		{"https://api.anthropic.com/v1", "claude-opus-4-5", APIMessages},
		{"http://localhost:11434/v1", "gpt-oss:20b", APIChat},
		{"https://openrouter.ai/api/v1", "openai/gpt-5.5", APIChat},
	} {
		if got := DefaultAPI(c.url, c.model); got != c.want {
			t.Errorf("DefaultAPI(%s, %s) = %s; want %s", c.url, c.model, got, c.want)
		}
	}
}
