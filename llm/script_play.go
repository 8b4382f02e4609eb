package llm

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Stream answers req with the first matching step; see [Provider] and
// [ParseScript]. A request no step matches gets a non-retryable LlmError
// naming the script and the request's last message.
func (s *Script) Stream(ctx context.Context, req Request, emit func(fsm.Event)) {
	finished := false
	defer recoverStream(ctx, req.ID, &finished, emit)
	emit = finalGuard(emit, &finished)
	st, idx := s.pick(&req)
	if st == nil {
		if ctx.Err() == nil {
			emit(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorOther, Message: s.unmatched(&req)})
		}
		return
	}
	p := player{ctx: ctx, emit: emit, pace: st.Pace}
	if !p.wait(st.Delay) {
		return
	}
	for _, t := range st.Reasoning {
		if !p.send(fsm.LlmReasoningDelta{Request: req.ID, Text: t}) {
			return
		}
	}
	for _, t := range st.Text {
		if !p.send(fsm.LlmTextDelta{Request: req.ID, Text: t}) {
			return
		}
	}
	calls, ok := p.toolCalls(req.ID, idx, st.ToolCalls)
	if !ok {
		return
	}
	if e := st.Error; e != nil {
		p.send(scriptError(req.ID, e))
		return
	}
	p.send(st.completed(req.ID, calls))
}

// toolCalls streams a step's tool calls (the step at index idx) as
// deltas, a call's arguments in its chunks, and returns the calls. ok is
// false when ctx was cancelled on the way.
func (p *player) toolCalls(reqID uint64, idx int, scripted []ScriptToolCall) (calls []fsm.ToolCall, ok bool) {
	calls = make([]fsm.ToolCall, 0, len(scripted))
	for i, c := range scripted {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", idx+1, i+1)
		}
		parts := c.Chunks
		if len(parts) == 0 {
			parts = splitN(c.Arguments, c.Split)
		}
		for j, part := range parts {
			d := fsm.LlmToolCallDelta{Request: reqID, Index: i, ArgumentsDelta: part}
			if j == 0 {
				d.ID, d.Name = id, c.Name
			}
			if !p.send(d) {
				return nil, false
			}
		}
		calls = append(calls, fsm.ToolCall{ID: id, Name: c.Name, Arguments: strings.Join(parts, "")})
	}
	return calls, true
}

// completed is the step's LlmCompleted with calls: its finish reason
// (default stop, or tool_calls with calls) and usage (the total defaults
// to prompt + completion).
func (st *Step) completed(reqID uint64, calls []fsm.ToolCall) fsm.LlmCompleted {
	reason := st.FinishReason
	if reason == "" {
		reason = "stop"
		if len(calls) > 0 {
			reason = "tool_calls"
		}
	}
	u := fsm.Usage{PromptTokens: st.Usage.Prompt, CompletionTokens: st.Usage.Completion, TotalTokens: st.Usage.Total,
		CachedTokens: st.Usage.Cached, ReasoningTokens: st.Usage.Reasoning}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if len(calls) == 0 {
		calls = nil
	}
	return fsm.LlmCompleted{Request: reqID, ToolCalls: calls, Usage: u, FinishReason: reason}
}

// pick claims the first step that matches req and has a use left.
func (s *Script) pick(req *Request) (*Step, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.steps {
		st := &s.steps[i]
		if (st.Repeat || s.used[i] == 0) && st.Match.matches(req) {
			s.used[i]++
			return st, i
		}
	}
	return nil, -1
}

// unmatched describes a request no step answers.
func (s *Script) unmatched(req *Request) string {
	last := "no messages"
	if n := len(req.Messages); n > 0 {
		m := req.Messages[n-1]
		c := m.Content
		if len(c) > 120 {
			c = c[:120] + "…"
		}
		last = fmt.Sprintf("last message %s %q", m.Role, c)
	}
	unplayed := s.Unplayed()
	left := "every step is used up"
	if len(unplayed) > 0 {
		left = "steps left, none matching: " + strings.Join(unplayed, ", ")
	}
	return fmt.Sprintf("script %q: no step matches request %d (%d messages, %s); %s",
		s.name, req.ID, len(req.Messages), last, left)
}

// scriptError builds the LlmError of a scripted error.
func scriptError(reqID uint64, e *ScriptError) fsm.LlmError {
	out := fsm.LlmError{Request: reqID, Kind: e.Kind, StatusCode: e.Status, RetryAfter: e.RetryAfter, Message: e.Message}
	if e.Status != 0 {
		derived := statusError(nil, reqID, e.Status, nil, []byte(e.Message))
		if out.Kind == "" {
			out.Kind = derived.Kind
		}
		out.Retryable = derived.Retryable
	}
	if e.Retryable != nil {
		out.Retryable = *e.Retryable
	}
	if out.Message == "" {
		out.Message = fmt.Sprintf("scripted %s error", out.Kind)
	}
	return out
}

// player emits a step's events with pacing, stopping on cancellation.
type player struct {
	ctx     context.Context
	emit    func(fsm.Event)
	pace    time.Duration
	started bool
}

// send waits the pace (except before the first event) and emits ev. It
// returns false if ctx was cancelled; nothing is emitted then.
func (p *player) send(ev fsm.Event) bool {
	if p.started && !p.wait(p.pace) {
		return false
	}
	p.started = true
	if p.ctx.Err() != nil {
		return false
	}
	p.emit(ev)
	return true
}

// wait sleeps d unless ctx ends first; it reports whether to go on.
func (p *player) wait(d time.Duration) bool {
	if d <= 0 {
		return p.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// splitN cuts s into n nearly equal parts on rune boundaries; n <= 1, or
// an empty s, gives s whole.
func splitN(s string, n int) []string {
	if n <= 1 || len(s) == 0 {
		return []string{s}
	}
	if n > len(s) {
		n = len(s)
	}
	out := make([]string, 0, n)
	for i := n; i > 0 && len(s) > 0; i-- {
		cut := (len(s) + i - 1) / i
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// finalGuard wraps emit to record when the final event has been emitted.
func finalGuard(emit func(fsm.Event), finished *bool) func(fsm.Event) {
	return func(ev fsm.Event) {
		switch ev.(type) {
		case fsm.LlmCompleted, fsm.LlmError:
			*finished = true
		}
		emit(ev)
	}
}
