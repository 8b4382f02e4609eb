package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": "Mon, 10 Mar 2025 12:00:20 GMT"}, 20 * time.Second},
		{map[string]string{"Retry-After": "Mon, 10 Mar 2025 11:00:00 GMT"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"retry-after-ms": "x", "Retry-After": "9"}, 9 * time.Second},
		{nil, 0},
	} {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tt.h, got, tt.want)
		}
	}
}

func TestServerMessage(t *testing.T) {
	for _, tt := range []struct{ body, msg, code string }{
		{`{"error":{"message":"bad","code":"context_length_exceeded"}}`, "bad", "context_length_exceeded"},
		{`{"error":{"message":"vllm","type":"BadRequestError","code":400}}`, "vllm", "400"},
		{`{"error":{"message":"typed","type":"server_error"}}`, "typed", "server_error"},
		{`{"error":"model not found"}`, "model not found", ""},
		{`{"message":"plain message"}`, "plain message", ""},
		{`{"detail":"fastapi says no"}`, "fastapi says no", ""},
		{"<html>502 Bad Gateway</html>\n", "<html>502 Bad Gateway</html>", ""},
		{strings.Repeat("x", 2000), strings.Repeat("x", maxMessageLen) + "…", ""},
	} {
		msg, code := serverMessage([]byte(tt.body))
		if msg != tt.msg || code != tt.code {
			t.Errorf("serverMessage(%.40q) = %q, %q; want %q, %q", tt.body, msg, code, tt.msg, tt.code)
		}
	}
}

func TestStatusErrorContextLengthAnyStatus(t *testing.T) {
	// llama.cpp's wording, sent with a 500 by some versions.
	e := statusError(nil, 1, 500, nil, []byte(`{"error":{"message":"the request exceeds the available context size, try increasing it"}}`))
	if e.Kind != fsm.ErrorContextLength || e.Retryable {
		t.Errorf("%+v", e)
	}
}

func TestStreamPanicBecomesError(t *testing.T) {
	s, err := NewScript("p", Step{Text: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	var evs []fsm.Event
	calls := 0
	s.Stream(t.Context(), simpleReq(1), func(ev fsm.Event) {
		calls++
		evs = append(evs, ev)
		if calls == 1 {
			panic("consumer bug")
		}
	})
	if e := lastErr(t, evs); !strings.Contains(e.Message, "consumer bug") {
		t.Errorf("%+v", e)
	}
}

// TestOpenRouterShowsTheUpstreamError: OpenRouter's "Provider returned
// error" says nothing; its metadata.raw (text, or the upstream's JSON
// body as a string) is what the user needs, for 4xx, 429 and 502 alike.
func TestOpenRouterShowsTheUpstreamError(t *testing.T) {
	d := dialects["openrouter"]
	cases := []struct {
		status int
		body   string
		kind   fsm.ErrorKind
		words  string
	}{
		{429, `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"moonshotai/kimi-k2 is temporarily rate-limited upstream. Please retry shortly.","provider_name":"Moonshot AI"}},"user_id":"user_2x"}`,
			fsm.ErrorRateLimited, "Provider returned error (Moonshot AI: moonshotai/kimi-k2 is temporarily rate-limited upstream"},
		{502, `{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"upstream connect error","provider_name":"Moonshot AI"}}}`,
			fsm.ErrorServer, "(Moonshot AI: upstream connect error)"},
		{400, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","provider_name":"Google AI Studio"}}}`,
			fsm.ErrorBadRequest, "(Google AI Studio: Function call is missing a thought_signature"},
	}
	for _, c := range cases {
		e := statusError(d, 1, c.status, nil, []byte(c.body))
		if e.Kind != c.kind || !strings.Contains(e.Message, c.words) || strings.Contains(e.Message, "\n") {
			t.Errorf("HTTP %d: kind %s message %q; want %s with %q", c.status, e.Kind, e.Message, c.kind, c.words)
		}
	}
}
