package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// stream sends one request to base with model and returns every event.
func stream(t *testing.T, base, model string, mod func(*llm.OpenAIConfig)) []fsm.Event {
	t.Helper()
	cfg := llm.OpenAIConfig{BaseURL: base, Model: model, IdleTimeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	p, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var evs []fsm.Event
	p.Stream(ctx, llm.Request{ID: 3, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "6 x 7?"}}},
		func(ev fsm.Event) { evs = append(evs, ev) })
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs
}

// transcript describes events one per line, as fsm.Describe does.
func transcript(evs []fsm.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Describe() + "\n")
	}
	return b.String()
}

// TestReasoningDeltas streams reasoning from the scripted HTTP server in
// both wire fields servers use, and checks that it arrives as
// LlmReasoningDelta, in order and before the answer, and that the usage
// keeps the cached and reasoning tokens the server reported.
func TestReasoningDeltas(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply {
				return llmtest.Reply{
					Reasoning: []string{"Six times seven", " is 42."}, ReasoningField: field,
					Text:  []string{"42"},
					Usage: &llmtest.Usage{Prompt: 30, Completion: 20, Cached: llmtest.Int(24), Reasoning: llmtest.Int(15)},
				}
			})
			got := transcript(stream(t, srv.BaseURL(), "deepseek-reasoner", nil))
			want := `LlmReasoningDelta req=3 "Six times seven"
LlmReasoningDelta req=3 " is 42."
LlmTextDelta req=3 "42"
LlmCompleted req=3 calls=[] usage=30/20/50 cached=24 reasoning=15 finish="stop"
`
			if got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
			if body := string(srv.Requests()[0].Body); !strings.Contains(body, `"stream_options":{"include_usage":true}`) {
				t.Errorf("the request does not ask for usage: %s", body)
			}
		})
	}
}

// TestUsageWithoutDetails checks that counts a server does not report
// stay absent (nil), not zero.
func TestUsageWithoutDetails(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"hi"}, Usage: &llmtest.Usage{Prompt: 5, Completion: 1}}
	})
	evs := stream(t, srv.BaseURL(), "qwen2.5-coder", nil)
	c, ok := evs[len(evs)-1].(fsm.LlmCompleted)
	if !ok {
		t.Fatalf("last event %s", evs[len(evs)-1].Describe())
	}
	if c.Usage.CachedTokens != nil || c.Usage.ReasoningTokens != nil {
		t.Errorf("usage %s: unreported counts must be absent", fsm.Describe(c))
	}
	b, _ := json.Marshal(c.Usage)
	if string(b) != `{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}` {
		t.Errorf("usage JSON %s", b)
	}
}

// rawSSE answers every request with the given chunks, then [DONE].
func rawSSE(t *testing.T, chunks ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestReasoningWireVariants covers shapes seen from real servers: newer
// vLLM sends the same text in both fields (shown once); a null or
// non-string reasoning field is ignored rather than failing the answer;
// DeepSeek reports cached tokens as prompt_cache_hit_tokens.
func TestReasoningWireVariants(t *testing.T) {
	base := rawSSE(t,
		`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"both","reasoning":"both"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":null,"reasoning_content":null,"content":"a"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":{"summary":"an object"},"content":"b"}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":1}}`,
	)
	got := transcript(stream(t, base, "deepseek-reasoner", nil))
	want := `LlmReasoningDelta req=3 "both"
LlmTextDelta req=3 "a"
LlmTextDelta req=3 "b"
LlmCompleted req=3 calls=[] usage=9/3/12 cached=8 finish="stop"
`
	if got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// TestMaxTokensField checks which field bounds the completion, on the
// bodies the server received.
func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		model, field, want string
	}{
		{"qwen2.5-coder", "", "max_tokens"},
		{"gpt-4o", "auto", "max_tokens"},
		{"gpt-5-mini", "", "max_completion_tokens"},
		{"o3-2025-04-16", "auto", "max_completion_tokens"},
		{"openai/o4-mini", "", "max_completion_tokens"},
		{"omni-coder", "", "max_tokens"},
		{"gpt-5", "max_tokens", "max_tokens"},
		{"llama3", "max_completion_tokens", "max_completion_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.model+"/"+tc.field, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
			stream(t, srv.BaseURL(), tc.model, func(c *llm.OpenAIConfig) { c.MaxTokens = 512; c.MaxTokensField = tc.field })
			req := srv.Requests()[0]
			if req.MaxTokensField != tc.want {
				t.Errorf("sent %q, want %q: %s", req.MaxTokensField, tc.want, req.Body)
			}
			var body map[string]any
			if err := json.Unmarshal(req.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body[tc.want] != float64(512) {
				t.Errorf("%s = %v, want 512", tc.want, body[tc.want])
			}
		})
	}
	if _, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "http://x/v1", Model: "m", MaxTokensField: "max_output"}); err == nil {
		t.Error("an unknown max tokens field was accepted")
	}
}
