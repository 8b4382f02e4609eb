package acp

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// TestThoughtChunksAndUsage: against a real OpenAI-compatible HTTP
// server whose model streams reasoning_content, the reasoning reaches the
// client as agent_thought_chunk (never as the agent's message), and
// session/prompt answers with the turn's usage, cached and thought tokens
// included.
func TestThoughtChunksAndUsage(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{
			Reasoning: []string{"MODEL-THOUGHT: ", "say hi."},
			Text:      []string{"Hi!"},
			Usage:     &llmtest.Usage{Prompt: 40, Completion: 12, Cached: llmtest.Int(32), Reasoning: llmtest.Int(8)},
		}
	})
	h := start(t, "", "", func(c *config.Config) {
		c.Model.Provider, c.Model.BaseURL, c.Model.Name, c.Model.Script = config.ProviderOpenAI, srv.BaseURL(), "deepseek-reasoner", ""
	})
	h.initialize(false, false)
	id := h.newSession(repo(t, map[string]string{"a.txt": "a\n"}))
	resp, err := h.prompt(id, "hello")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("session/prompt: %+v, %v", resp, err)
	}
	updates := h.client.snapshot()
	var thought strings.Builder
	for _, n := range updates {
		if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			thought.WriteString(c.Content.Text.Text)
		}
	}
	if !strings.Contains(thought.String(), "MODEL-THOUGHT: say hi.") {
		t.Errorf("agent_thought_chunk %q, want the reasoning", thought.String())
	}
	if got := agentText(updates); got != "Hi!" {
		t.Errorf("agent message %q, want the answer alone", got)
	}
	u := resp.Usage
	if u == nil || u.InputTokens != 40 || u.OutputTokens != 12 || u.TotalTokens != 52 ||
		u.CachedReadTokens == nil || *u.CachedReadTokens != 32 || u.ThoughtTokens == nil || *u.ThoughtTokens != 8 {
		t.Errorf("prompt usage %+v", u)
	}
}
