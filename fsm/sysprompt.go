package fsm

// refreshSystemPrompt makes the conversation's system message the
// configured system prompt when Reconfigure changed it (the project's
// instructions were edited, or agent.system_prompt). It runs when a turn
// starts, never mid-turn, so one turn's requests share one system prompt;
// a journal that records the Reconfigure replays it at the same point.
//
// The history is append-only (requests share its backing array), so the
// new system message goes into a copy: O(messages), paid only when the
// prompt changed.
func (m *Machine) refreshSystemPrompt() {
	want := m.cfg.SystemPrompt
	if want == "" || len(m.history) == 0 || m.history[0].Role != RoleSystem {
		return
	}
	old := m.history[0].Content
	if old == want {
		return
	}
	h := make([]Message, len(m.history), len(m.history)+8)
	copy(h, m.history)
	h[0] = Message{Role: RoleSystem, Content: want}
	m.history = h
	// The elided view holds the old system message: rebuild it.
	m.elided.forget()
	if m.prompt.tokens > 0 {
		// The server counted the old prompt; adjust by the estimate of
		// the difference.
		m.prompt.tokens = max(1, m.prompt.tokens+int64(len(want)-len(old))/4)
	}
}
