package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// contextLengthError is OpenAI's own answer to a request over the window.
const contextLengthError = `{"error":{"message":"This model's maximum context length is 100 tokens. However, your messages resulted in 180 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

// A conversation compacted mid-turn (the server said the request is over
// its context window) shows as one `compacted` event, valid against the
// schema, with the summary and what it replaced; the turn then completes.
func TestExecJSONLCompactedEvent(t *testing.T) {
	var requests atomic.Int32
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		n := requests.Add(1)
		switch {
		case r.Last().Content == fsm.SummaryPrompt:
			return llmtest.Reply{Text: []string{"Goals: answer questions. Files changed: none."}}
		case n == 2: // the second run's first request
			return llmtest.Reply{Status: 400, ErrorBody: contextLengthError}
		default:
			return llmtest.Reply{Text: []string{fmt.Sprintf("Answer %d.", n)}}
		}
	})
	cfg := writeFile(t, t.TempDir(), "loom.toml", fmt.Sprintf("[model]\nbase_url = %q\nname = \"m\"\n", srv.BaseURL()))
	dir, env := testRepo(t), isolatedEnv(t)
	if r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--config", cfg, "first question"); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--resume", "--config", cfg, "second question")
	if r.code != 0 {
		t.Fatalf("second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	compacted := ofType(events, "compacted")
	if len(compacted) != 1 {
		t.Fatalf("%d compacted events, want 1:\n%s", len(compacted), r.stdout)
	}
	c := compacted[0]
	if c["summary"] != "Goals: answer questions. Files changed: none." || c["turn"] != 2.0 || c["dropped"].(float64) < 1 {
		t.Errorf("compacted = %v", c)
	}
	if got := sequence(events); !strings.Contains(got, "compacted") || !strings.HasSuffix(got, "message_completed turn_completed") {
		t.Errorf("events: %s", got)
	}
}
