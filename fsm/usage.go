package fsm

import "fmt"

// Usage returns the token usage of the current (or last) turn and of the
// whole conversation since it began or was last reset, compaction
// requests included. After a reset both are zero. The conversation's figure survives a restart, since
// replaying the journal's LlmCompleted events rebuilds it.
func (m *Machine) Usage() (turn, conversation Usage) {
	return m.turnUsage, m.totalUsage
}

// addUsage counts one response's usage in the conversation, and in the
// turn unless it answers an on-demand compaction made between turns (that
// belongs to no turn).
func (m *Machine) addUsage(u Usage) {
	if m.compaction == nil || m.compaction.resume {
		m.turnUsage = m.turnUsage.add(u)
	}
	m.totalUsage = m.totalUsage.add(u)
}

// Usage counts the tokens of one model response, or of a turn or a whole
// conversation when summed by the machine. CachedTokens
// (prompt_tokens_details.cached_tokens: prompt tokens the server served
// from its cache) and ReasoningTokens
// (completion_tokens_details.reasoning_tokens: completion tokens spent on
// reasoning) are nil when the server did not report them, which is not
// the same as 0; a sum has them when any of its parts had them.
type Usage struct {
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	TotalTokens      int64  `json:"total_tokens"`
	CachedTokens     *int64 `json:"cached_tokens,omitempty"`
	ReasoningTokens  *int64 `json:"reasoning_tokens,omitempty"`
	// Cost is what the server says the response cost (OpenRouter's
	// usage.cost, in its credits: US dollars); nil when it does not say.
	Cost *float64 `json:"cost,omitempty"`
}

func (u Usage) add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
		CachedTokens:     addOptional(u.CachedTokens, v.CachedTokens),
		ReasoningTokens:  addOptional(u.ReasoningTokens, v.ReasoningTokens),
		Cost:             addCost(u.Cost, v.Cost),
	}
}

// addCost sums two costs that may be absent, as addOptional does.
func addCost(a, b *float64) *float64 {
	if a == nil && b == nil {
		return nil
	}
	var n float64
	if a != nil {
		n += *a
	}
	if b != nil {
		n += *b
	}
	return &n
}

// addOptional sums two counts that may be absent: absent only when both
// are. The result never shares storage with its arguments.
func addOptional(a, b *int64) *int64 {
	if a == nil && b == nil {
		return nil
	}
	var n int64
	if a != nil {
		n += *a
	}
	if b != nil {
		n += *b
	}
	return &n
}

func describeUsage(u Usage) string {
	s := fmt.Sprintf("%d/%d/%d", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
	if u.CachedTokens != nil {
		s += fmt.Sprintf(" cached=%d", *u.CachedTokens)
	}
	if u.ReasoningTokens != nil {
		s += fmt.Sprintf(" reasoning=%d", *u.ReasoningTokens)
	}
	if u.Cost != nil {
		s += fmt.Sprintf(" cost=%g", *u.Cost)
	}
	return s
}
