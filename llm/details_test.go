package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// openRouterGemini3Tools is OpenRouter streaming Gemini 3's tool call
// (openrouter.ai/docs "Reasoning tokens": delta.reasoning and
// delta.reasoning_details, reasoning.text in pieces of one index, the
// call's reasoning.encrypted; usage with cost in the last chunk).
const openRouterGemini3Tools = `: OPENROUTER PROCESSING

data: {"id":"gen-1764","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"**Reading the file**","reasoning_details":[{"type":"reasoning.text","text":"**Reading the file**","format":"google-gemini-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1764","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":" a.txt <first>","reasoning_details":[{"type":"reasoning.text","text":" a.txt <first>","format":"google-gemini-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1764","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"tool_0_read_file_Qm9vaw","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}],"reasoning_details":[{"type":"reasoning.encrypted","data":"CiQB4/H/XgVpAxMiK5mV+1d5Oq==","id":"tool_0_read_file_Qm9vaw","format":"google-gemini-v1","index":0}]},"finish_reason":"tool_calls","native_finish_reason":"STOP","logprobs":null}]}

data: {"id":"gen-1764","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":1210,"completion_tokens":58,"total_tokens":1268,"cost":0.0021925,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":41}}}

data: [DONE]

`

const openRouterAnswer = `data: {"id":"gen-1765","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000001,"choices":[{"index":0,"delta":{"role":"assistant","content":"a.txt says hello."},"finish_reason":"stop","native_finish_reason":"STOP","logprobs":null}]}

data: {"id":"gen-1765","provider":"Google AI Studio","model":"google/gemini-3-pro-preview","object":"chat.completion.chunk","created":1764000001,"choices":[],"usage":{"prompt_tokens":1290,"completion_tokens":6,"total_tokens":1296,"cost":0.00168,"prompt_tokens_details":{"cached_tokens":1024}}}

data: [DONE]

`

// The details the tool call's message must carry back.
const wantDetails = `[{"type":"reasoning.text","text":"**Reading the file** a.txt <first>","format":"google-gemini-v1","index":0},{"type":"reasoning.encrypted","data":"CiQB4/H/XgVpAxMiK5mV+1d5Oq==","id":"tool_0_read_file_Qm9vaw","format":"google-gemini-v1","index":0}]`

// TestOpenRouterGemini3ToolTurn: OpenRouter in front of Gemini 3 refuses
// a tool loop's next request whose assistant message lacks the
// reasoning_details it streamed; loom sends them back unchanged, in the
// loop and in later turns.
func TestOpenRouterGemini3ToolTurn(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		var req struct {
			Messages []struct {
				Role             string          `json:"role"`
				ToolCalls        json.RawMessage `json:"tool_calls"`
				ReasoningDetails []struct {
					Type string `json:"type"`
					Data string `json:"data"`
				} `json:"reasoning_details"`
			} `json:"messages"`
		}
		json.Unmarshal(b, &req)
		for _, m := range req.Messages {
			if m.Role != "assistant" || len(m.ToolCalls) == 0 {
				continue
			}
			ok := false
			for _, d := range m.ReasoningDetails {
				ok = ok || (d.Type == "reasoning.encrypted" && d.Data == "CiQB4/H/XgVpAxMiK5mV+1d5Oq==")
			}
			if !ok {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is missing a thought_signature in functionCall parts.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n","provider_name":"Google AI Studio"}}}`)
				return
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			io.WriteString(w, openRouterGemini3Tools)
		} else {
			io.WriteString(w, openRouterAnswer)
		}
	}))
	defer srv.Close()
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/api/v1", Model: "google/gemini-3-pro-preview", Server: "openrouter"})
	if err != nil {
		t.Fatal(err)
	}
	user := fsm.Message{Role: fsm.RoleUser, Content: "read a.txt"}
	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{user}})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	if got.done.Opaque != (fsm.Opaque{API: "openrouter", Data: wantDetails}) {
		t.Errorf("opaque %+v", got.done.Opaque)
	}
	if c := got.done.Usage.Cost; c == nil || *c != 0.0021925 {
		t.Errorf("cost %v; want OpenRouter's usage.cost", c)
	}
	if got.reasoning != "**Reading the file** a.txt <first>" {
		t.Errorf("reasoning %q", got.reasoning)
	}
	asst := fsm.Message{Role: fsm.RoleAssistant, ToolCalls: got.done.ToolCalls, Opaque: got.done.Opaque}
	loop := []fsm.Message{user, asst, {Role: fsm.RoleTool, ToolCallID: got.done.ToolCalls[0].ID, Content: "hello"}}
	ans := streamOnce(t, p, Request{ID: 2, Messages: loop})
	if ans.err != nil {
		t.Fatalf("the tool loop's request was refused: %s", ans.err.Message)
	}
	mu.Lock()
	last := bodies[len(bodies)-1]
	mu.Unlock()
	// The request encoder escapes '<' and '>' as JSON allows: the same
	// strings.
	sent := strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(wantDetails)
	if !strings.Contains(last, `"reasoning_details":`+sent) {
		t.Errorf("the details did not go back unchanged: %s", last)
	}
	next := append(append([]fsm.Message(nil), loop...), fsm.Message{Role: fsm.RoleAssistant, Content: ans.text},
		fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
	if r := streamOnce(t, p, Request{ID: 3, Messages: next, TurnStart: len(next) - 1}); r.err != nil {
		t.Fatalf("a later turn was refused: %s", r.err.Message)
	}

	// Without them, the user sees what Gemini said, not only
	// "Provider returned error".
	bare := fsm.Message{Role: fsm.RoleAssistant, ToolCalls: got.done.ToolCalls}
	r := streamOnce(t, p, Request{ID: 4, Messages: []fsm.Message{user, bare, loop[2]}})
	if r.err == nil || !strings.Contains(r.err.Message, "Function call is missing a thought_signature") {
		t.Errorf("error without the upstream's words: %+v", r.err)
	}
}
