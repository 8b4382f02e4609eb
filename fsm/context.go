package fsm

import (
	"fmt"
	"strings"
)

// Context management. The machine keeps what it sends under a token
// budget (Config.ContextWindow), cheapest measure first:
//
//  1. Elision: tool results older than the last KeepToolTurns user turns
//     and longer than elideMinBytes are replaced, in what is sent, by a
//     note naming the call and the size (the history and the journal keep
//     them whole). It happens in batches, once the request nears the
//     compaction threshold, so that the prompt's prefix stays the same
//     from one request to the next (see refreshElision).
//  2. Compaction: when the estimate of the next request passes
//     CompactAt × ContextWindow, the machine first sends a compaction
//     request (the fixed summarisation prompt SummaryPrompt), and the
//     conversation becomes: the system prompt, the summary, and the last
//     user message with what followed it.
//  3. A context-length error from the server compacts and retries once;
//     a conversation already at its minimum ends the turn with an error
//     that says what to do.
//
// The estimate is the server's usage.prompt_tokens of the last response
// plus, for the messages appended since, their bytes divided by four (a
// cheap, tokenizer-free rule that overestimates code and English a
// little). With no usage yet, it is bytes/4 of the whole request.

// SummaryPrompt is the user message of a compaction request.
const SummaryPrompt = "[loom] The conversation is about to be compacted to fit the model's context window. " +
	"Write a summary of the conversation so far that lets you continue the work without it. Use these headings: " +
	"Goals (what the user asked for), Decisions (what was decided and why), Files changed (paths and what changed), " +
	"Open problems (what is unfinished or failing, and the next step). Be specific and brief; answer with the summary only."

// summaryLead starts the message that holds a compaction's summary.
const summaryLead = "[loom] Summary of the earlier conversation (it was compacted to fit the context window):\n\n"

// elideMinBytes is the size below which an old tool result is kept.
const elideMinBytes = 1024

// Compact asks the machine to compact the conversation now (loom.compact).
// Valid while waiting for input; with nothing to compact it only says so.
type Compact struct{}

func (Compact) isEvent() {}

// Describe implements [Event].
func (Compact) Describe() string { return "Compact" }

// CompactionStarted tells the caller that a compaction request follows,
// for display: Reason says why, Tokens is the estimate against Window.
type CompactionStarted struct {
	Turn   uint64
	Reason string
	Tokens int64
	Window int64
}

// Compacted tells the caller that the conversation was compacted: Summary
// replaced Dropped messages; Tokens estimates the conversation now.
type Compacted struct {
	Turn    uint64
	Summary string
	Dropped int
	Tokens  int64
}

func (CompactionStarted) isAction() {}
func (Compacted) isAction()         {}

// Describe implements [Action].
func (a CompactionStarted) Describe() string {
	return fmt.Sprintf("CompactionStarted turn=%d tokens=%d window=%d %s", a.Turn, a.Tokens, a.Window, quote(a.Reason))
}

// Describe implements [Action].
func (a Compacted) Describe() string {
	return fmt.Sprintf("Compacted turn=%d dropped=%d tokens=%d %s", a.Turn, a.Dropped, a.Tokens, quote(a.Summary))
}

// Message returns the text a user sees when a compaction starts:
// "compacting the conversation (118k of 128k tokens)".
func (a CompactionStarted) Message() string {
	s := "compacting the conversation"
	switch {
	case a.Window >= 10_000:
		s += fmt.Sprintf(" (%s of %s tokens)", kilo(a.Tokens), kilo(a.Window))
	case a.Window > 0:
		// A small window in thousands reads "(2k of 2k tokens)": exact.
		s += fmt.Sprintf(" (%d of %d tokens)", a.Tokens, a.Window)
	}
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

func kilo(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%dk", (n+500)/1000)
}

// EstimateTokens estimates the tokens of msgs: bytes/4 of their text,
// tool calls and ids, plus a few tokens of framing per message.
func EstimateTokens(msgs []Message) int64 {
	var n int64
	for i := range msgs {
		n += messageBytes(&msgs[i])
	}
	return n / 4
}

func messageBytes(m *Message) int64 {
	n := int64(len(m.Content)+len(m.ToolCallID)) + 16 + int64(len(m.Images))*imageTokens*4
	for _, c := range m.ToolCalls {
		n += int64(len(c.ID)+len(c.Name)+len(c.Arguments)) + 32
	}
	return n
}

// compaction is a compaction in progress.
type compaction struct {
	// resume tells what follows: the turn's pending request (true), or
	// a return to waiting (an on-demand compaction while idle).
	resume bool
	// retried marks a compaction made after a context-length error, so
	// that a second one ends the turn instead of looping.
	afterError bool
}

// Tokens estimates the tokens the next request would send (see the
// estimate above). It costs O(messages) when no usage is known yet.
func (m *Machine) Tokens() int64 { return m.prompt.estimate(m.elided.messages(m.history)) }

// compactable returns where the part of the history a compaction would
// summarise begins and ends: after the system prompt, up to the current
// (or last) turn's user message. ok is false when that part holds
// nothing but an earlier summary: the conversation is at its minimum.
func (m *Machine) compactable() (from, to int, ok bool) {
	if len(m.history) > 0 && m.history[0].Role == RoleSystem {
		from = 1
	}
	to = m.turnStart
	if to <= from {
		return from, to, false
	}
	if to-from == 1 && strings.HasPrefix(m.history[from].Content, summaryLead) {
		return from, to, false
	}
	return from, to, true
}

// overBudget reports whether sending msgs would pass the compaction
// threshold, and the estimate.
func (m *Machine) overBudget(msgs []Message) (bool, int64) {
	w := m.window()
	if w <= 0 {
		return false, 0
	}
	est := m.prompt.estimate(msgs)
	return float64(est) > m.cfg.CompactAt*float64(w), est
}

// startCompaction sends the compaction request: the summarisable part of
// the history (its oldest messages left out when even that would not fit
// the window) and SummaryPrompt.
func (m *Machine) startCompaction(acts []Action, reason string, tokens int64, c compaction) []Action {
	from, to, _ := m.compactable()
	m.compaction = &c
	acts = append(acts, CompactionStarted{Turn: m.turn, Reason: reason, Tokens: tokens, Window: m.window()})
	msgs := make([]Message, 0, to-from+2)
	msgs = append(msgs, m.history[:from]...)
	part := m.elided.messages(m.history)[from:to]
	if w := m.window(); w > 0 {
		// Keep the newest messages that fit 3/4 of the window, starting
		// at a user message so that every tool call keeps its result.
		budget := w*3/4 - EstimateTokens(msgs) - int64(len(SummaryPrompt)/4)
		start := len(part)
		for start > 0 && budget-messageBytes(&part[start-1])/4 >= 0 {
			budget -= messageBytes(&part[start-1]) / 4
			start--
		}
		for start < len(part) && part[start].Role != RoleUser {
			start++
		}
		part = part[start:]
	}
	msgs = append(msgs, part...)
	msgs = append(msgs, Message{Role: RoleUser, Content: SummaryPrompt})
	m.kind = CallingLlm
	m.request++
	m.retries = 0
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	m.compactMsgs = msgs
	return append(acts, SendLlmRequest{Turn: m.turn, Request: m.request, Iteration: m.iteration, Messages: msgs[:len(msgs):len(msgs)], TurnStart: len(msgs), Compaction: true, Model: m.model, Effort: m.effort})
}

// finishCompaction replaces the summarised part of the history by the
// summary, then goes on with what the compaction interrupted.
func (m *Machine) finishCompaction(summary string) []Action {
	c := *m.compaction
	m.compaction, m.compactMsgs = nil, nil
	from, to, _ := m.compactable()
	summary = strings.TrimSpace(summary)
	if summary == "" {
		summary = "(the model gave no summary)"
	}
	h := make([]Message, 0, from+1+len(m.history)-to)
	h = append(h, m.history[:from]...)
	h = append(h, Message{Role: RoleUser, Content: summaryLead + summary + m.carriedState(), Note: true})
	h = append(h, m.history[to:]...)
	dropped := to - from
	m.checkpoints.compacted(from, to)
	m.redo = nil
	m.history = h
	m.turnStart = from + 1
	m.turnStarts = append(m.turnStarts[:0], m.turnStart)
	m.elided.forget()
	m.prompt = promptCount{}
	acts := []Action{Compacted{Turn: m.turn, Summary: summary, Dropped: dropped, Tokens: EstimateTokens(h)}}
	if !c.resume {
		return m.endIdleWork(acts)
	}
	if c.afterError {
		m.ctxRetried = true
	}
	m.kind = CallingLlm
	return append(acts, m.sendRequest())
}

// endIdleWork returns to waiting after work done between turns (an
// on-demand compaction), starting queued input if any.
func (m *Machine) endIdleWork(acts []Action) []Action {
	m.kind = WaitingForUserInput
	m.retries, m.lastErr = 0, nil
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	return m.startQueued(acts)
}

// onCompact: an on-demand compaction while waiting for input.
func (m *Machine) onCompact() []Action {
	if _, _, ok := m.compactable(); !ok {
		return []Action{DisplayError{Turn: m.turn, Kind: ErrorOther, Message: "nothing to compact: the conversation is already at its minimum"}}
	}
	return m.startCompaction(nil, "on request", m.prompt.estimate(m.elided.messages(m.history)), compaction{})
}

// minimalError is the error of a conversation that cannot shrink further.
func (m *Machine) minimalError(serverSaid string) []Action {
	msg := "the conversation no longer fits the model's context window, even compacted to its minimum (system prompt, summary and the current turn)"
	if serverSaid != "" {
		msg += " (the server said: " + serverSaid + ")"
	}
	msg += ". Start a new conversation with loom.reset, ask for less at once (e.g. read smaller parts of files), or use a model with a larger window (set model.context_window)."
	return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: ErrorContextLength, Message: msg}}, TurnFailed)
}

// onContextLengthError handles a context-length error of a request:
// compact and retry once, else the minimal error.
func (m *Machine) onContextLengthError(e LlmError) []Action {
	if m.compaction != nil {
		// The compaction request itself did not fit.
		wasIdle := !m.compaction.resume
		m.compaction, m.compactMsgs = nil, nil
		if wasIdle {
			return m.endIdleWork([]Action{DisplayError{Turn: m.turn, Kind: ErrorContextLength, Message: "could not compact the conversation: " + e.Message}})
		}
		return m.minimalError(e.Message)
	}
	if _, _, ok := m.compactable(); !ok || m.ctxRetried {
		return m.minimalError(e.Message)
	}
	return m.startCompaction(nil, "the server said the context is full", m.prompt.estimate(m.elided.messages(m.history)), compaction{resume: true, afterError: true})
}

// refreshElision moves the elision cut to the start of the
// KeepToolTurns-th last turn, in batches: eliding rewrites the prompt from
// the first elided result on, which servers that cache the prompt by its
// prefix (vLLM, llama.cpp, OpenAI, DeepSeek, Anthropic) must then prefill
// afresh, so old results are elided only when it is worth it — the
// request would pass elideShare of the compaction threshold, and the
// batch saves at least a tenth of the window. Until then the prompt only
// grows at its end, and each request's prefix is the previous request.
// It builds a new view (never modifying one a request was given) only for
// a batch, so its cost is paid once per turn at most. force elides
// whatever is old enough, due or not (the request would otherwise be
// compacted); it reports whether it elided anything.
func (m *Machine) refreshElision(force bool) bool {
	keep := m.cfg.KeepToolTurns
	if keep <= 0 || len(m.turnStarts) <= keep {
		return false
	}
	cut := m.turnStarts[len(m.turnStarts)-keep]
	if cut <= m.elided.to {
		return false
	}
	saved := m.elided.saving(m.history, cut)
	if saved == 0 {
		m.elided.to = cut
		return false
	}
	if !force && !m.elisionDue(saved) {
		return false
	}
	m.elided.elide(m.history, cut)
	m.prompt = promptCount{}
	return true
}

// elisionDue reports whether a batch of elisions saving saved bytes is
// due now (see refreshElision).
func (m *Machine) elisionDue(saved int64) bool {
	w := m.window()
	if w <= 0 {
		return saved/4 >= noWindowBatch
	}
	est := m.prompt.estimate(m.elided.messages(m.history))
	return float64(est) > elideShare*m.cfg.CompactAt*float64(w) && saved/4 >= w/10
}

// elideShare is the share of the compaction threshold (CompactAt ×
// window) past which old tool results are elided.
const elideShare = 0.75

// noWindowBatch is the least a batch of elisions saves, in tokens, when
// the machine has no window to budget with.
const noWindowBatch = 8192

func elidedNote(call string, n int) string {
	return fmt.Sprintf("[output of `%s` elided: %s; run the tool again to see it]", shorten(call), size(n))
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KB", (n+512)/1024)
}
