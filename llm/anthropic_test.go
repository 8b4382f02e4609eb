package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
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

// messagesServer is a real HTTP server speaking Anthropic's Messages
// streaming wire format (testdata/messages) and refusing what Anthropic's
// API refuses: a missing key or version, no max_tokens, more than four
// cache breakpoints, empty text blocks, a tool_use without its
// tool_result in the next user message, and — with thinking on — a
// tool-using assistant message that does not start with its thinking
// block, or a thinking block changed from what the server sent.
type messagesServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	plan   func(body string) (int, http.Header, string)
}

func newMessagesServer(t *testing.T, plan func(body string) (int, http.Header, string)) *messagesServer {
	s := &messagesServer{plan: plan}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *messagesServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[len(s.bodies)-1]
}

func (s *messagesServer) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	refuse := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CS"}`, typ, msg)
	}
	if r.URL.Path != "/v1/messages" {
		refuse(404, "not_found_error", "Not Found")
		return
	}
	if r.Header.Get("x-api-key") != "sk-ant-test" {
		refuse(401, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		refuse(400, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	if msg := validateMessages(b); msg != "" {
		refuse(400, "invalid_request_error", msg)
		return
	}
	status, h, payload := s.plan(string(b))
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

// The thinking blocks tool_turn.sse streams, as they must come back.
const (
	wantThinking = `{"type":"thinking","thinking":"The user wants a.txt <and> the list: two calls.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/=="}`
	wantRedacted = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`
)

func validateMessages(body []byte) string {
	var req struct {
		MaxTokens *int64          `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		Thinking  json.RawMessage `json:"thinking"`
		Messages  []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "bad JSON"
	}
	if req.MaxTokens == nil {
		return "max_tokens: Field required"
	}
	if !req.Stream {
		return "this test server streams only"
	}
	if n := strings.Count(string(body), `"cache_control"`); n > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", n)
	}
	type block struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
		Text      *string
	}
	for i, m := range req.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			return fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\" (messages.%d)", i)
		}
		var uses []string
		for j, raw := range m.Content {
			var b block
			json.Unmarshal(raw, &b)
			if b.Type == "text" && b.Text != nil && *b.Text == "" {
				return fmt.Sprintf("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
			}
			if b.Type == "thinking" || b.Type == "redacted_thinking" {
				// The server checks the signature against the thinking
				// text: each field must be what it sent, to the byte.
				var got, want1, want2 map[string]string
				json.Unmarshal(raw, &got)
				json.Unmarshal([]byte(wantThinking), &want1)
				json.Unmarshal([]byte(wantRedacted), &want2)
				if !maps.Equal(got, want1) && !maps.Equal(got, want2) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block: %s", i, j, raw)
				}
			}
			if b.Type == "tool_use" {
				uses = append(uses, b.ID)
			}
		}
		if len(uses) > 0 && len(req.Thinking) > 0 {
			var first block
			json.Unmarshal(m.Content[0], &first)
			if first.Type != "thinking" && first.Type != "redacted_thinking" {
				return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", i, first.Type)
			}
		}
		if len(uses) > 0 {
			if i+1 >= len(req.Messages) {
				continue
			}
			results := map[string]bool{}
			for _, raw := range req.Messages[i+1].Content {
				var b block
				json.Unmarshal(raw, &b)
				if b.Type == "tool_result" {
					results[b.ToolUseID] = true
				}
			}
			for _, id := range uses {
				if !results[id] {
					return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i, id)
				}
			}
		}
	}
	return ""
}

func msgFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "messages", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func anthropicProvider(t *testing.T, srv *messagesServer, cfg AnthropicConfig) *Anthropic {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "claude-sonnet-4-5"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-ant-test"
	}
	p, err := NewAnthropic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAnthropicToolTurnAndLaterTurn: a tool turn with thinking, the tool
// loop's next request, and a later turn over the Messages API. The
// thinking blocks go back byte for byte before the text and tool_use they
// led to; tool results go in the next user message; the prefix carries
// cache breakpoints (tools, system, the previous turn's end, the last
// message: at most four); usage counts the cached prompt.
func TestAnthropicToolTurnAndLaterTurn(t *testing.T) {
	n := 0
	srv := newMessagesServer(t, func(string) (int, http.Header, string) {
		n++
		if n == 1 {
			return 200, nil, msgFixture(t, "tool_turn.sse")
		}
		return 200, nil, msgFixture(t, "answer.sse")
	})
	p := anthropicProvider(t, srv, AnthropicConfig{ReasoningEffort: "medium", MaxTokens: 8000})
	sys := fsm.Message{Role: fsm.RoleSystem, Content: "You are loom."}
	user := fsm.Message{Role: fsm.RoleUser, Content: "read a.txt and list the files"}
	tools := []ToolSchema{
		{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "list_files", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	}
	got := streamAnthropic(t, p, Request{ID: 1, Messages: []fsm.Message{sys, user}, Tools: tools})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	body := srv.last()
	for _, want := range []string{`"max_tokens":8000`, `"thinking":{"budget_tokens":4096,"type":"enabled"}`,
		`"system":[{"text":"You are loom.","cache_control":{"type":"ephemeral"},"type":"text"}]`,
		`"name":"list_files","cache_control":{"type":"ephemeral"}`, `"required":["path"]`} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}
	if got.reasoning != "The user wants a.txt <and> the list: two calls." || got.text != "I'll read a.txt and list the files." {
		t.Errorf("reasoning %q text %q", got.reasoning, got.text)
	}
	calls := got.done.ToolCalls
	if len(calls) != 2 || calls[0] != (fsm.ToolCall{ID: "toolu_01A09q90qw90lq917835lq9", Name: "read_file", Arguments: `{"path": "a.txt"}`}) ||
		calls[1].ID != "toolu_01B19r01rx01mr028946mr0" || calls[1].Arguments != `{"path": "."}` {
		t.Fatalf("calls %+v", calls)
	}
	if u := got.done.Usage; u.PromptTokens != 1830 || u.CompletionTokens != 89 || u.CachedTokens == nil || *u.CachedTokens != 0 {
		t.Errorf("usage %+v", u)
	}
	if got.done.Opaque != (fsm.Opaque{API: "messages", Data: "[" + wantThinking + "," + wantRedacted + "]"}) {
		t.Errorf("opaque %+v", got.done.Opaque)
	}

	asst := fsm.Message{Role: fsm.RoleAssistant, Content: got.text, ToolCalls: calls, Opaque: got.done.Opaque}
	loop := []fsm.Message{sys, user, asst,
		{Role: fsm.RoleTool, ToolCallID: calls[0].ID, Content: "hello"},
		{Role: fsm.RoleTool, ToolCallID: calls[1].ID, Content: ""},
		{Role: fsm.RoleUser, Content: "[loom] a.txt changed on disk", Note: true}}
	ans := streamAnthropic(t, p, Request{ID: 2, Messages: loop, TurnStart: 1, Tools: tools})
	if ans.err != nil {
		t.Fatalf("the tool loop's request was refused: %s", ans.err.Message)
	}
	body = srv.last()
	// anthropic-sdk-go's encoder escapes '<' and '>' as JSON allows: the
	// same strings.
	thinkingSent := strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(wantThinking)
	wantAsst := `{"content":[` + thinkingSent + `,` + wantRedacted + `,{"text":"I'll read a.txt and list the files.","type":"text"},{"id":"toolu_01A09q90qw90lq917835lq9","input":{"path":"a.txt"},"name":"read_file","type":"tool_use"}`
	if !strings.Contains(body, wantAsst) {
		t.Errorf("the assistant message is not sent back as it came:\n%s\nwant within it:\n%s", body, wantAsst)
	}
	if ans.text != "a.txt says hello." || ans.done.Usage.PromptTokens != 1952 || *ans.done.Usage.CachedTokens != 1800 {
		t.Errorf("answer %q usage %+v", ans.text, ans.done.Usage)
	}

	next := append(append([]fsm.Message(nil), loop...),
		fsm.Message{Role: fsm.RoleAssistant, Content: ans.text, Opaque: ans.done.Opaque},
		fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
	if r := streamAnthropic(t, p, Request{ID: 3, Messages: next, TurnStart: len(next) - 1, Tools: tools}); r.err != nil {
		t.Fatalf("a later turn was refused: %s", r.err.Message)
	}
	body = srv.last()
	if !strings.Contains(body, wantAsst) {
		t.Errorf("a later turn changed the tool turn's assistant message: %s", body)
	}
	if n := strings.Count(body, "cache_control"); n != 4 {
		t.Errorf("%d cache breakpoints; want 4 (tools, system, previous turn, last message): %s", n, body)
	}
	if !strings.Contains(body, `{"text":"a.txt says hello.","cache_control":{"type":"ephemeral"},"type":"text"}],"role":"assistant"},{"content":[{"text":"thanks","cache_control":{"type":"ephemeral"},"type":"text"}]`) {
		t.Errorf("the breakpoints are not on the previous turn's end and the last message: %s", body)
	}
}

// TestAnthropicAdaptiveThinking: Claude 4.6 and later get adaptive
// thinking with an effort, shown summarised.
func TestAnthropicAdaptiveThinking(t *testing.T) {
	srv := newMessagesServer(t, func(string) (int, http.Header, string) { return 200, nil, msgFixture(t, "answer.sse") })
	p := anthropicProvider(t, srv, AnthropicConfig{Model: "claude-opus-4-7", ReasoningEffort: "xhigh"})
	if r := streamAnthropic(t, p, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	body := srv.last()
	for _, want := range []string{`"thinking":{"display":"summarized","type":"adaptive"}`, `"output_config":{"effort":"xhigh"}`, `"max_tokens":16384`} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}
}

// TestAnthropicErrors: each failure is classified as the state machine
// needs it: 401, 429 with retry-after, 529 overloaded, "prompt is too
// long" (compaction), an overloaded error mid-stream, a cut stream.
func TestAnthropicErrors(t *testing.T) {
	errBody := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CS"}`, typ, msg)
	}
	cases := []struct {
		name      string
		key       string
		status    int
		header    http.Header
		payload   string
		kind      fsm.ErrorKind
		retryable bool
		after     time.Duration
		partial   string
	}{
		{"401", "sk-ant-wrong", 200, nil, "", fsm.ErrorAuth, false, 0, ""},
		{"429", "", 429, http.Header{"Retry-After": {"7"}}, errBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), fsm.ErrorRateLimited, true, 7 * time.Second, ""},
		{"529", "", 529, nil, errBody("overloaded_error", "Overloaded"), fsm.ErrorServer, true, 0, ""},
		{"too long", "", 400, nil, errBody("invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"), fsm.ErrorContextLength, false, 0, ""},
		{"mid-stream overloaded", "", 200, nil, msgFixture(t, "overloaded_midstream.sse"), fsm.ErrorServer, true, 0, "Partial"},
		{"truncated", "", 200, nil, msgFixture(t, "truncated.sse"), fsm.ErrorStream, true, 0, "Half an ans"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newMessagesServer(t, func(string) (int, http.Header, string) { return c.status, c.header, c.payload })
			p := anthropicProvider(t, srv, AnthropicConfig{APIKey: c.key})
			r := streamAnthropic(t, p, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}})
			if r.err == nil {
				t.Fatal("no error")
			}
			if r.err.Kind != c.kind || r.err.Retryable != c.retryable || r.err.RetryAfter != c.after || r.text != c.partial {
				t.Errorf("kind %s retryable %v after %s partial %q; want %s %v %s %q (%s)", r.err.Kind, r.err.Retryable, r.err.RetryAfter, r.text,
					c.kind, c.retryable, c.after, c.partial, r.err.Message)
			}
		})
	}
}

func streamAnthropic(t *testing.T, p Provider, req Request) streamed {
	t.Helper()
	var s streamed
	ctx := t.Context()
	p.Stream(ctx, req, func(ev fsm.Event) {
		switch e := ev.(type) {
		case fsm.LlmTextDelta:
			s.text += e.Text
		case fsm.LlmReasoningDelta:
			s.reasoning += e.Text
		case fsm.LlmCompleted:
			s.done = &e
		case fsm.LlmError:
			s.err = &e
		}
	})
	if (s.done == nil) == (s.err == nil) {
		t.Fatalf("want exactly one final event, got done=%v err=%v", s.done, s.err)
	}
	return s
}
