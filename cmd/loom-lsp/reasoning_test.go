package main

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// reasoningServer is a real OpenAI-compatible HTTP server whose model
// thinks (reasoning_content) before it reads greet.txt, thinks again,
// then answers; it reports cached and reasoning tokens.
func reasoningServer(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Reply{
				Reasoning: []string{"It says hello.", " Answer briefly."},
				Text:      []string{"greet.txt says ", "hello."},
				Usage:     &llmtest.Usage{Prompt: 120, Completion: 30, Cached: llmtest.Int(100), Reasoning: llmtest.Int(12)},
			}
		}
		return llmtest.Reply{
			Reasoning: []string{"SECRET-THOUGHT: ", "I should read the file."},
			ToolCalls: []llmtest.ToolCall{llmtest.Call("r1", "read_file", `{"path":"greet.txt"}`)},
			Usage:     &llmtest.Usage{Prompt: 80, Completion: 20, Cached: llmtest.Int(0), Reasoning: llmtest.Int(9)},
		}
	})
}

// TestExecReasoningAndUsage runs exec against the scripted HTTP server:
// JSONL carries the reasoning as reasoning_delta events, valid against the
// schema and apart from the messages; no later request sends it back to
// the model; turn_completed carries the turn's and the conversation's
// usage with cached and reasoning tokens. In text mode stdout holds the
// answer alone, and --verbose shows the reasoning on stderr.
func TestExecReasoningAndUsage(t *testing.T) {
	schema := eventSchema(t)
	dir, env, srv := testRepo(t), isolatedEnv(t), reasoningServer(t)
	model := []string{"--base-url", srv.BaseURL(), "--model", "deepseek-reasoner"}
	r := runLoomEnv(t, env, dir, "", append([]string{"exec", "--output", "jsonl"}, append(model, "what does greet.txt say?")...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, schema, r.stdout)
	want := "session_started turn_started reasoning_delta tool_started tool_completed reasoning_delta message_delta message_completed turn_completed"
	if got := sequence(events); got != want {
		t.Fatalf("event sequence\n got: %s\nwant: %s\nstdout:\n%s", got, want, r.stdout)
	}
	var thought strings.Builder
	for _, ev := range ofType(events, "reasoning_delta") {
		thought.WriteString(ev["text"].(string))
	}
	if got := thought.String(); got != "SECRET-THOUGHT: I should read the file.It says hello. Answer briefly." {
		t.Errorf("reasoning %q", got)
	}
	if m := ofType(events, "message_completed"); len(m) != 1 || m[0]["text"] != "greet.txt says hello." {
		t.Errorf("message_completed %v: the answer alone", m)
	}
	for i, req := range srv.Requests() {
		if strings.Contains(string(req.Body), "SECRET-THOUGHT") || strings.Contains(string(req.Body), "Answer briefly") {
			t.Errorf("request %d sends the reasoning back to the model: %s", i+1, req.Body)
		}
	}
	done := ofType(events, "turn_completed")[0]
	usage, _ := done["usage"].(map[string]any)
	wantUsage := map[string]any{"prompt_tokens": 200.0, "completion_tokens": 50.0, "total_tokens": 250.0, "cached_tokens": 100.0, "reasoning_tokens": 21.0}
	for k, v := range wantUsage {
		if usage[k] != v {
			t.Errorf("turn_completed usage %v: %s = %v, want %v", usage, k, usage[k], v)
		}
	}
	if conv, _ := done["conversation_usage"].(map[string]any); conv["total_tokens"] != 250.0 || conv["cached_tokens"] != 100.0 {
		t.Errorf("conversation_usage %v", conv)
	}

	// The second turn's conversation usage adds up both turns.
	r = runLoomEnv(t, env, dir, "", append([]string{"exec", "--resume", "--output", "jsonl", "--no-deltas"}, append(model, "and again?")...)...)
	events = validEvents(t, schema, r.stdout)
	if len(ofType(events, "reasoning_delta")) != 0 {
		t.Errorf("--no-deltas still sent reasoning_delta:\n%s", r.stdout)
	}
	done = ofType(events, "turn_completed")[0]
	if conv, _ := done["conversation_usage"].(map[string]any); conv["total_tokens"] != 500.0 || conv["reasoning_tokens"] != 42.0 {
		t.Errorf("conversation_usage after two turns %v, want 500 total and 42 reasoning tokens", conv)
	}

	// Text mode: stdout is the answer; --verbose shows the thinking on
	// stderr, without it (stderr is not a terminal here) nothing.
	r = runLoomEnv(t, env, dir, "", append([]string{"exec", "--verbose"}, append(model, "once more?")...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "greet.txt says hello." {
		t.Errorf("text stdout %q (exit %d), want the answer alone\nstderr:\n%s", r.stdout, r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "thinking") || !strings.Contains(r.stderr, "SECRET-THOUGHT: I should read the file.") {
		t.Errorf("--verbose stderr does not show the reasoning:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "· tokens: 200 in (100 cached), 50 out (21 reasoning)") {
		t.Errorf("text mode does not end with the turn's tokens on stderr:\n%s", r.stderr)
	}
	r = runLoomEnv(t, env, dir, "", append([]string{"exec"}, append(model, "last one?")...)...)
	if strings.Contains(r.stdout+r.stderr, "SECRET-THOUGHT") {
		t.Errorf("reasoning shown without --verbose off a terminal:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}
