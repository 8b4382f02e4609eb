package fsm

import "fmt"

// This file holds the model's reasoning ("thinking"): a part of a
// response that is shown to the user but never becomes part of the
// conversation the model reads.

// LlmReasoningDelta is a piece of the model's reasoning streamed for
// request Request: what servers send as delta.reasoning_content (vLLM,
// llama.cpp, DeepSeek) or delta.reasoning (OpenRouter, Ollama). It is
// shown apart from the answer and is never sent back to the model: it is
// not assistant text, and no message of the conversation holds it.
type LlmReasoningDelta struct {
	Request uint64
	Text    string
}

// DisplayReasoning asks the caller to show a piece of the model's
// reasoning, apart from the answer (collapsed, dimmed, or as a "thought").
type DisplayReasoning struct {
	Turn uint64
	Text string
}

func (LlmReasoningDelta) isEvent() {}
func (DisplayReasoning) isAction() {}

// Describe implements [Event].
func (e LlmReasoningDelta) Describe() string {
	return fmt.Sprintf("LlmReasoningDelta req=%d %s", e.Request, quote(e.Text))
}

// Describe implements [Action].
func (a DisplayReasoning) Describe() string {
	return fmt.Sprintf("DisplayReasoning turn=%d %s", a.Turn, quote(a.Text))
}

// onReasoningDelta shows reasoning. It changes nothing in the machine: the
// reasoning of a compaction request is not shown either.
func (m *Machine) onReasoningDelta(e LlmReasoningDelta) []Action {
	if m.compaction != nil || e.Text == "" {
		return nil
	}
	return []Action{DisplayReasoning{Turn: m.turn, Text: e.Text}}
}
