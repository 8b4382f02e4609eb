package fsm

// elision is the history as requests send it: with the tool results
// before to elided (Machine.refreshElision decides when).
type elision struct {
	// view is history with old tool results elided, up to to; nil when
	// nothing was elided. It is append-only like history: a view a
	// request was given is never modified.
	view []Message
	to   int
}

// messages returns the messages a request sends now: history, with old
// tool results elided.
func (e *elision) messages(history []Message) []Message {
	n := len(history)
	if e.view == nil {
		return history[:n:n]
	}
	for len(e.view) < n {
		e.view = append(e.view, history[len(e.view)])
	}
	return e.view[:n:n]
}

// saving estimates the bytes that eliding the tool results of
// history[to:cut] saves.
func (e *elision) saving(history []Message, cut int) int64 {
	var saved int64
	for i := e.to; i < cut; i++ {
		if msg := &history[i]; msg.Role == RoleTool && len(msg.Content) > elideMinBytes {
			// The note is some 80 bytes.
			saved += int64(len(msg.Content)) - 80
		}
	}
	return saved
}

// elide builds a new view with the tool results of history[to:cut]
// elided, each named by its call.
func (e *elision) elide(history []Message, cut int) {
	var names map[string]string
	view := make([]Message, len(history), len(history)+8)
	copy(view, e.messages(history))
	for i := e.to; i < cut; i++ {
		msg := &view[i]
		if msg.Role == RoleAssistant {
			for _, c := range msg.ToolCalls {
				if names == nil {
					names = map[string]string{}
				}
				names[c.ID] = c.Name + " " + c.Arguments
			}
		}
		if msg.Role == RoleTool && len(msg.Content) > elideMinBytes {
			msg.Content = elidedNote(names[msg.ToolCallID], len(msg.Content))
		}
	}
	e.view, e.to = view, cut
}

// forget drops the view: the history it was made of changed (reset,
// compaction, rewind, a new system prompt).
func (e *elision) forget() { e.view, e.to = nil, 0 }

// promptCount is what the server counted of the last prompt: its
// prompt_tokens, for a request of msgs messages; zero when unknown.
type promptCount struct {
	tokens int64
	msgs   int
}

// estimate is the token estimate of sending msgs now: the server's count
// of the last prompt and an estimate of what follows it, else an
// estimate of all.
func (p promptCount) estimate(msgs []Message) int64 {
	if p.tokens > 0 && p.msgs <= len(msgs) {
		return p.tokens + EstimateTokens(msgs[p.msgs:])
	}
	return EstimateTokens(msgs)
}
