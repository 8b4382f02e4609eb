package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// streamed is what one Stream emitted.
type streamed struct {
	text, reasoning string
	done            *fsm.LlmCompleted
	err             *fsm.LlmError
}

func streamOnce(t *testing.T, p *OpenAI, req Request) streamed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var s streamed
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

func dialectProvider(t *testing.T, srv *llmtest.DialectServer, server string) *OpenAI {
	t.Helper()
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.BaseURL(), Model: "m", Server: server, MaxTokens: 512})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDialects replays each server family's recorded bytes through the
// provider: a turn with reasoning, text, two parallel tool calls and
// usage; the follow-up request, which the server's own validation must
// accept; keep-alives; every recorded error, classified and timed as that
// server means it.
func TestDialects(t *testing.T) {
	for _, name := range llmtest.Dialects() {
		t.Run(name, func(t *testing.T) {
			plan := "tools"
			srv := llmtest.NewDialectServer(t, name, func(int, llmtest.Request) string { return plan })
			fx := srv.Fixture
			p := dialectProvider(t, srv, name)
			user := fsm.Message{Role: fsm.RoleUser, Content: "read a.txt and list the files"}

			// 1. The tool turn.
			got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{user}})
			if got.err != nil {
				t.Fatalf("tools: %s", got.err.Message)
			}
			want := fx.Expect
			if got.text != want.Text || got.reasoning != want.Reasoning {
				t.Errorf("text %q reasoning %q; want %q, %q", got.text, got.reasoning, want.Text, want.Reasoning)
			}
			calls := got.done.ToolCalls
			if len(calls) != 2 || calls[0].ID != want.CallIDs[0] || calls[1].ID != want.CallIDs[1] ||
				calls[0].Name != "read_file" || calls[1].Name != "list_files" {
				t.Fatalf("calls %+v; want read_file %s and list_files %s", calls, want.CallIDs[0], want.CallIDs[1])
			}
			for i, wantPath := range []string{"a.txt", "."} {
				var args struct{ Path string }
				if err := json.Unmarshal([]byte(calls[i].Arguments), &args); err != nil || args.Path != wantPath {
					t.Errorf("call %d arguments %q; want path %q", i, calls[i].Arguments, wantPath)
				}
			}
			if calls[0].Signature != want.Signature {
				t.Errorf("first call's signature %q; want %q", calls[0].Signature, want.Signature)
			}
			if u := got.done.Usage; u.PromptTokens != want.Prompt || u.CompletionTokens != want.Completion {
				t.Errorf("usage %+v; want %d/%d", u, want.Prompt, want.Completion)
			}
			wantEcho := ""
			if p.Dialect().EchoReasoning {
				wantEcho = want.Reasoning
			}
			if got.done.Reasoning != wantEcho {
				t.Errorf("LlmCompleted.Reasoning %q; want %q (kept only where the server requires it back)", got.done.Reasoning, wantEcho)
			}

			// 2. The tool loop's next request: the server's validation
			// must accept it.
			asst := fsm.Message{Role: fsm.RoleAssistant, Content: got.text, ToolCalls: calls, Reasoning: got.done.Reasoning}
			loop := []fsm.Message{user, asst,
				{Role: fsm.RoleTool, ToolCallID: calls[0].ID, Content: "hello"},
				{Role: fsm.RoleTool, ToolCallID: calls[1].ID, Content: "a.txt"}}
			plan = "answer"
			ans := streamOnce(t, p, Request{ID: 2, Messages: loop, TurnStart: 0})
			if ans.err != nil {
				t.Fatalf("the tool loop's request failed (rejected %d): %s", srv.Rejected(), ans.err.Message)
			}
			if ans.text != want.AnswerText || ans.done.Usage.PromptTokens != want.AnswerPrompt || ans.done.Usage.CompletionTokens != want.AnswerCompletion {
				t.Errorf("answer %q usage %+v; want %q %d/%d", ans.text, ans.done.Usage, want.AnswerText, want.AnswerPrompt, want.AnswerCompletion)
			}

			// 3. A later turn, and a compaction request (TurnStart past
			// the end): signatures are not echoed across turns; DeepSeek's
			// reasoning is, in every later request.
			next := append(append([]fsm.Message(nil), loop...),
				fsm.Message{Role: fsm.RoleAssistant, Content: ans.text, Reasoning: ans.done.Reasoning},
				fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
			for _, turnStart := range []int{len(next) - 1, len(next)} {
				if r := streamOnce(t, p, Request{ID: 3, Messages: next, TurnStart: turnStart}); r.err != nil {
					t.Fatalf("a later turn (turn start %d) failed: %s", turnStart, r.err.Message)
				}
				last := string(srv.Requests()[len(srv.Requests())-1].Body)
				if strings.Contains(last, "thought_signature") {
					t.Errorf("a later turn's request sends thought_signature: %s", last)
				}
				if echoes := strings.Contains(last, `"reasoning_content":`); echoes != p.Dialect().EchoReasoning {
					t.Errorf("a later turn's request sends reasoning_content: %v, want %v: %s", echoes, p.Dialect().EchoReasoning, last)
				}
			}

			// 4. Keep-alives change nothing.
			plan = "keepalive"
			if r := streamOnce(t, p, Request{ID: 4, Messages: []fsm.Message{user}}); r.err != nil || r.text != want.AnswerText {
				t.Errorf("keep-alive stream: text %q err %v", r.text, r.err)
			}

			// 5. Every recorded error.
			for _, e := range fx.Errors {
				plan = e.Name
				r := streamOnce(t, p, Request{ID: 5, Messages: []fsm.Message{user}})
				if r.err == nil {
					t.Errorf("%s: no error, want %s", e.Name, e.Kind)
					continue
				}
				if string(r.err.Kind) != e.Kind || r.err.Retryable != e.Retryable {
					t.Errorf("%s: kind %s retryable %v; want %s %v (%s)", e.Name, r.err.Kind, r.err.Retryable, e.Kind, e.Retryable, r.err.Message)
				}
				wantAfter := time.Duration(0)
				if e.RetryAfter != "" {
					wantAfter, _ = time.ParseDuration(e.RetryAfter)
				}
				if r.err.RetryAfter != wantAfter {
					t.Errorf("%s: retry after %s; want %s", e.Name, r.err.RetryAfter, wantAfter)
				}
				if r.text != e.Partial {
					t.Errorf("%s: partial text %q; want %q", e.Name, r.text, e.Partial)
				}
				if strings.HasPrefix(strings.TrimSpace(r.err.Message), "[") || strings.Contains(r.err.Message, "\n") {
					t.Errorf("%s: the message shows the raw body: %q", e.Name, r.err.Message)
				}
			}
			if n := srv.Rejected(); n != 0 {
				t.Errorf("the server's validation rejected %d requests", n)
			}
		})
	}
}

// TestDialectValidationBites: the test server's validations are real:
// a provider that does not speak the dialect (the generic one) is refused
// as that server refuses it, so TestDialects' acceptance means something.
func TestDialectValidationBites(t *testing.T) {
	for _, name := range []string{"mistral", "deepseek", "gemini"} {
		t.Run(name, func(t *testing.T) {
			plan := "tools"
			srv := llmtest.NewDialectServer(t, name, func(int, llmtest.Request) string { return plan })
			right := dialectProvider(t, srv, name)
			got := streamOnce(t, right, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "go"}}})
			if got.err != nil {
				t.Fatal(got.err.Message)
			}
			generic := dialectProvider(t, srv, "openai")
			loop := []fsm.Message{{Role: fsm.RoleUser, Content: "go"},
				{Role: fsm.RoleAssistant, ToolCalls: got.done.ToolCalls, Reasoning: got.done.Reasoning},
				{Role: fsm.RoleTool, ToolCallID: got.done.ToolCalls[0].ID, Content: "x"},
				{Role: fsm.RoleTool, ToolCallID: got.done.ToolCalls[1].ID, Content: "y"}}
			plan = "answer"
			r := streamOnce(t, generic, Request{ID: 2, Messages: loop})
			if r.err == nil || srv.Rejected() != 1 {
				t.Fatalf("the generic dialect was not refused (rejected %d)", srv.Rejected())
			}
			if want := srv.Fixture.Reject.Kind; string(r.err.Kind) != want || r.err.Retryable {
				t.Errorf("refusal classified %s retryable=%v; want %s, not retryable: %s", r.err.Kind, r.err.Retryable, want, r.err.Message)
			}
			if r := streamOnce(t, right, Request{ID: 3, Messages: loop}); r.err != nil {
				t.Errorf("the %s dialect was refused: %s", name, r.err.Message)
			}
		})
	}
}

// The dialect is told by the base URL's host, else by the models list's
// owned_by (TestOllamaRunningWindow), else by the Server header.
func TestDialectDetection(t *testing.T) {
	for url, want := range map[string]string{
		"https://api.deepseek.com/v1":                             "deepseek",
		"https://generativelanguage.googleapis.com/v1beta/openai": "gemini",
		"https://api.mistral.ai/v1":                               "mistral",
		"https://openrouter.ai/api/v1":                            "openrouter",
		"https://api.anthropic.com/v1":                            "anthropic",
		"https://api.openai.com/v1":                               "openai",
		"http://localhost:11434/v1":                               "ollama",
		"http://127.0.0.1:1234/v1":                                "lmstudio",
		"http://gpu-box:8000/v1":                                  "openai",
	} {
		p, err := NewOpenAI(OpenAIConfig{BaseURL: url, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Dialect().Name; got != want {
			t.Errorf("%s: dialect %s, want %s", url, got, want)
		}
	}
	if _, err := NewOpenAI(OpenAIConfig{BaseURL: "http://x/v1", Model: "m", Server: "ollma"}); err == nil || !strings.Contains(err.Error(), "ollama") {
		t.Errorf("an unknown server name: %v", err)
	}

	// llama-server says "Server: llama.cpp" on every response.
	srv := llmtest.NewDialectServer(t, "llamacpp", func(int, llmtest.Request) string { return "answer" })
	p := dialectProvider(t, srv, "")
	if p.Dialect().Name != "openai" {
		t.Fatalf("before any response: %s", p.Dialect().Name)
	}
	streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}})
	if p.Dialect().Name != "llamacpp" {
		t.Errorf("after a response with Server: llama.cpp: %s", p.Dialect().Name)
	}
}
