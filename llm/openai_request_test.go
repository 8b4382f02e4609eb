package llm

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// fullRequest has every message shape: system, user, an assistant turn
// with two tool calls and no text, both tool results, assistant text.
func fullRequest() Request {
	return Request{
		ID: 11,
		Messages: []fsm.Message{
			{Role: fsm.RoleSystem, Content: "You are loom."},
			{Role: fsm.RoleUser, Content: "What is in go.mod?"},
			{Role: fsm.RoleAssistant, ToolCalls: []fsm.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: `{"path":"go.mod"}`},
				{ID: "call_2", Name: "list_files", Arguments: `{}`},
			}},
			{Role: fsm.RoleTool, ToolCallID: "call_1", Content: "module example.com/x\n"},
			{Role: fsm.RoleTool, ToolCallID: "call_2", Content: "go.mod\nmain.go"},
			{Role: fsm.RoleAssistant, Content: "It declares module example.com/x."},
			{Role: fsm.RoleUser, Content: "Thanks"},
		},
		Tools: []ToolSchema{
			{Name: "read_file", Description: "Read a file of the workspace.", Parameters: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string","description":"relative path"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)},
			{Name: "list_files", Description: "List files.", Parameters: nil},
		},
	}
}

// TestOpenAIRequestShape checks, on the body the server received, that
// messages, tool calls, tool results, tools and options go out in the
// exact shape of the Chat Completions API (testdata/request_golden.json).
func TestOpenAIRequestShape(t *testing.T) {
	srv := newFakeServer(t, serveSSE(fixture(t, "text_chunks.sse")))
	temp := 0.2
	p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) {
		c.Model = "qwen2.5-coder"
		c.MaxTokens = 1024
		c.Temperature = &temp
		c.Headers = map[string]string{"X-Title": "loom-lsp"}
	})
	run(t, p, fullRequest())
	rec := srv.last(t)
	golden := filepath.Join("testdata", "request_golden.json")
	if *rewrite {
		var v any
		if err := json.Unmarshal(rec.body, &v); err != nil {
			t.Fatal(err)
		}
		out, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got, want any
	if err := json.Unmarshal(rec.body, &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, rec.body)
	}
	if err := json.Unmarshal(fixture(t, "request_golden.json"), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request body differs from %s:\n%s", golden, rec.body)
	}
	if h := rec.header.Get("X-Title"); h != "loom-lsp" {
		t.Errorf("X-Title = %q", h)
	}
	if h := rec.header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q", h)
	}
}

func TestOpenAIAPIKeyHeader(t *testing.T) {
	// A key in the environment must never reach a server configured
	// without one (a local server, or another provider).
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	for _, tt := range []struct{ key, want string }{
		{"", ""},
		{"sk-test-123", "Bearer sk-test-123"},
	} {
		srv := newFakeServer(t, serveSSE(fixture(t, "text_chunks.sse")))
		p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) { c.APIKey = tt.key })
		run(t, p, simpleReq(1))
		h := srv.last(t).header
		if got := h.Get("Authorization"); got != tt.want {
			t.Errorf("key %q: Authorization = %q, want %q", tt.key, got, tt.want)
		}
		if got := h.Get("OpenAI-Organization"); got != "" {
			t.Errorf("OpenAI-Organization from the environment was sent: %q", got)
		}
	}
}

func TestOpenAIBadRequestInput(t *testing.T) {
	srv := newFakeServer(t, serveSSE(fixture(t, "text_chunks.sse")))
	p := newTestProvider(t, srv.URL, nil)
	for name, req := range map[string]Request{
		"bad schema": {ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "x"}},
			Tools: []ToolSchema{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
		"bad role":        {ID: 1, Messages: []fsm.Message{{Role: "robot", Content: "x"}}},
		"tool without id": {ID: 1, Messages: []fsm.Message{{Role: fsm.RoleTool, Content: "x"}}},
	} {
		e := lastErr(t, run(t, p, req))
		if e.Kind != fsm.ErrorBadRequest || e.Retryable {
			t.Errorf("%s: %+v", name, e)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.reqs) != 0 {
		t.Errorf("%d requests sent for invalid input", len(srv.reqs))
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	for _, cfg := range []OpenAIConfig{
		{Model: "m"},
		{BaseURL: "http://x"},
		{BaseURL: "http://x", Model: "m", IdleTimeout: -1},
		{BaseURL: "http://x", Model: "m", FirstByteTimeout: -1},
	} {
		if _, err := NewOpenAI(cfg); err == nil {
			t.Errorf("NewOpenAI(%+v) accepted", cfg)
		}
	}
}
