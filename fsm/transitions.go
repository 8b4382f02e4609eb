package fsm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Each state change happens in one small function below, so that the
// transition table can be read off the code.

// cancelledResult is the tool result of a call that Cancel cut short.
const cancelledResult = "tool error: cancelled by the user before this call finished"

// cancelledPlan is the result of a proposed plan the user did not decide
// on before cancelling the turn.
const cancelledPlan = "tool error: the user cancelled the turn before deciding on the plan; stay in the current mode"

// startTurn begins a user turn: UserInput -> CallingLlm + SendLlmRequest.
func (m *Machine) startTurn(in UserInput) []Action {
	text := in.Text
	m.turn += 1 + m.dropped
	m.dropped = 0
	m.iteration = 0
	m.turnUsage = Usage{}
	m.flushChanged()
	m.ctxRetried, m.emptyRetried = false, false
	m.stopContinued = 0
	m.children.newTurn()
	m.refreshSystemPrompt()
	m.turnStart = len(m.history)
	m.turnStarts = append(m.turnStarts, m.turnStart)
	m.checkpoints = append(m.checkpoints, checkpoint{turn: m.turn, prompt: text, at: m.turnStart, told: m.told, plan: m.plan})
	m.redo = nil // a new prompt ends what a rewind left to redo
	content := text
	if in.HookContext != "" {
		content += "\n\n[context added by hooks]\n" + in.HookContext
	}
	m.history = append(m.history, Message{Role: RoleUser, Content: content, Images: in.Images})
	m.refreshElision(false)
	return m.becomeCallingLlm(nil)
}

// becomeCallingLlm sends the next model request of the turn, unless the
// iteration guard stops the turn.
func (m *Machine) becomeCallingLlm(acts []Action) []Action {
	if acts, stopped := m.stopAfterBatch(acts); stopped {
		return acts
	}
	if m.iteration >= m.cfg.MaxIterations {
		acts = append(acts, DisplayError{
			Turn: m.turn, Kind: ErrorOther,
			Message: fmt.Sprintf("stopped after %d model requests in this turn (agent.max_iterations); ask again to continue", m.iteration),
		})
		return m.endTurn(acts, TurnFailed)
	}
	m.iteration++
	m.retries = 0
	m.flushChanged()
	over, est := m.overBudget(m.elided.messages(m.history))
	if over && m.refreshElision(true) {
		// Eliding the old tool results may be enough.
		over, est = m.overBudget(m.elided.messages(m.history))
	}
	if over {
		if _, _, ok := m.compactable(); ok {
			return m.startCompaction(acts, "past agent.compact_at", est, compaction{resume: true})
		}
	}
	return append(acts, m.sendRequest())
}

// retryRequest re-sends the failed request: Error + RetryTimeoutFired ->
// CallingLlm + SendLlmRequest. The iteration count is unchanged.
func (m *Machine) retryRequest() []Action {
	m.lastErr = nil
	if m.compaction != nil {
		m.kind = CallingLlm
		m.request++
		m.partial.Reset()
		msgs := m.compactMsgs
		return []Action{SendLlmRequest{Turn: m.turn, Request: m.request, Iteration: m.iteration, Messages: msgs[:len(msgs):len(msgs)], TurnStart: len(msgs), Compaction: true, Model: m.model, Effort: m.effort}}
	}
	return []Action{m.sendRequest()}
}

func (m *Machine) sendRequest() Action {
	m.kind = CallingLlm
	m.request++
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	msgs := m.elided.messages(m.history)
	m.sentMsgs = len(msgs)
	m.sentEstimate = m.prompt.estimate(msgs)
	return SendLlmRequest{Turn: m.turn, Request: m.request, Iteration: m.iteration, Messages: msgs, TurnStart: m.turnStart, Model: m.model, Effort: m.effort}
}

// onToolCallDelta shows a tool call the model is still writing.
func (m *Machine) onToolCallDelta(e LlmToolCallDelta) []Action {
	var c *streamingCall
	for i := range m.streaming {
		if m.streaming[i].index == e.Index {
			c = &m.streaming[i]
			break
		}
	}
	if c == nil {
		m.streaming = append(m.streaming, streamingCall{index: e.Index})
		c = &m.streaming[len(m.streaming)-1]
	}
	if e.ID != "" {
		c.id = e.ID
	}
	c.name += e.Name
	return []Action{DisplayToolCall{Turn: m.turn, CallID: c.id, Name: c.name, Status: ToolStreaming}}
}

// becomeProcessingLlmResponse handles LlmCompleted: the assistant message
// joins the conversation, then the machine leaves the transient
// ProcessingLlmResponse for ExecutingTools (calls present) or ends the
// turn.
func (m *Machine) becomeProcessingLlmResponse(e LlmCompleted) []Action {
	m.kind = ProcessingLlmResponse
	m.addUsage(e.Usage)
	m.retries = 0
	if m.compaction != nil {
		summary := m.partial.String()
		m.partial.Reset()
		m.streaming = m.streaming[:0]
		return m.finishCompaction(summary)
	}
	if m.compaction == nil && promptCut(e.Usage, m.sentEstimate) {
		return m.onPromptCut(e)
	}
	if e.Usage.PromptTokens > 0 {
		m.prompt = promptCount{tokens: promptRead(e.Usage), msgs: m.sentMsgs}
	}
	calls := normalizeCalls(e.ToolCalls, m.request)
	problems := m.callProblems(calls)
	text := m.partial.String()
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	if text == "" && len(calls) == 0 && e.Reasoning == "" {
		if overflow, ok := overflowedEmpty(e, m.sentEstimate, m.window()); ok {
			return m.onContextLengthError(overflow)
		}
		if m.compaction == nil {
			return m.onEmptyCompletion()
		}
	}
	if text != "" || len(calls) > 0 {
		msg := Message{Role: RoleAssistant, Content: text, ToolCalls: calls, Reasoning: e.Reasoning, Opaque: e.Opaque}
		m.history = append(m.history, msg)
	}
	if len(calls) == 0 {
		return m.endOrStop(text)
	}
	return m.becomeExecutingTools(calls, problems)
}

// normalizeCalls gives every call a unique, non-empty ID and arguments
// that are at least "{}", without modifying the caller's slice.
func normalizeCalls(in []ToolCall, request uint64) []ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]ToolCall, len(in))
	seen := make(map[string]bool, len(in))
	for i, c := range in {
		if c.ID == "" || seen[c.ID] {
			base := c.ID
			if base == "" {
				base = fmt.Sprintf("call_%d_%d", request, i)
			}
			id := base
			for k := 2; seen[id]; k++ {
				id = fmt.Sprintf("%s_%d", base, k)
			}
			c.ID = id
		}
		seen[c.ID] = true
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		out[i] = c
	}
	return out
}

// becomeExecutingTools starts a tool batch. Calls that cannot run (unknown
// tool, arguments that are not a JSON object) are answered at once with a
// tool error the model can read.
func (m *Machine) becomeExecutingTools(calls []ToolCall, problems []string) []Action {
	m.kind = ExecutingTools
	m.execs = make([]ToolExecution, len(calls))
	m.execByID = make(map[string]int, len(calls))
	m.running = 0
	var acts []Action
	run := ExecuteTools{Turn: m.turn, Review: m.cfg.ReviewEdits}
	for i, c := range calls {
		spec := m.cfg.Tools[c.Name]
		if spec.Mutating && spec.RunsReadOnly && m.Mode().ReadOnly() && !m.cfg.ReadOnly {
			// Runs with no write access: it changes nothing.
			spec.Mutating, run.ReadOnly = false, true
		}
		x := ToolExecution{Call: c, Mutating: spec.Mutating, Status: ExecPending}
		if problem := problems[i]; problem != "" {
			x.Status, x.Result, x.IsError = ExecCompleted, problem, true
			acts = append(acts, DisplayToolCall{Turn: m.turn, CallID: c.ID, Name: c.Name, Status: ToolFailed, Detail: problem})
		} else if internal, ok := m.runInternal(&x); ok {
			acts = append(acts, internal...)
		} else {
			m.running++
			run.Calls = append(run.Calls, c)
			run.Mutating = append(run.Mutating, spec.Mutating)
			acts = append(acts, DisplayToolCall{Turn: m.turn, CallID: c.ID, Name: c.Name, Status: ToolPending})
		}
		m.execs[i] = x
		m.execByID[c.ID] = i
	}
	if m.running == 0 {
		return m.finishBatch(acts)
	}
	if len(run.Calls) == 0 {
		return acts
	}
	return append(acts, run)
}

// callProblems returns, for each call, why it cannot run ("" if it can).
// Arguments that are not a JSON object are replaced by "{}" in calls, so
// that the conversation stays acceptable to servers that parse them; the
// problem quotes what the model sent.
func (m *Machine) callProblems(calls []ToolCall) []string {
	problems := make([]string, len(calls))
	for i := range calls {
		problems[i] = m.callProblem(&calls[i])
	}
	return problems
}

func (m *Machine) callProblem(c *ToolCall) string {
	if _, known := m.cfg.Tools[c.Name]; !known {
		return fmt.Sprintf("tool error: unknown tool %q; available tools: %s", c.Name, strings.Join(m.toolNames(), ", "))
	}
	if !json.Valid([]byte(c.Arguments)) {
		var v any
		err := json.Unmarshal([]byte(c.Arguments), &v)
		sent := c.Arguments
		c.Arguments = "{}"
		return fmt.Sprintf("tool error: the arguments of %s are not valid JSON (%v); you sent %s; send a JSON object matching the tool's schema", c.Name, err, quote(sent))
	}
	if strings.TrimLeft(c.Arguments, " \t\r\n")[0] != '{' {
		sent := c.Arguments
		c.Arguments = "{}"
		return fmt.Sprintf("tool error: the arguments of %s must be a JSON object; you sent %s", c.Name, quote(sent))
	}
	return m.modeRefusal(*c)
}

func (m *Machine) toolNames() []string {
	names := make([]string, 0, len(m.cfg.Tools))
	for n := range m.cfg.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// onToolProgress moves an execution to Running.
func (m *Machine) onToolProgress(e ToolProgress) []Action {
	x := &m.execs[m.execByID[e.CallID]]
	x.Status, x.Progress = ExecRunning, e.Message
	return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: e.Message}}
}

// onToolCompleted records a result; the last one finishes the batch.
func (m *Machine) onToolCompleted(e ToolCompleted) []Action {
	x := &m.execs[m.execByID[e.CallID]]
	x.Status, x.Result, x.IsError = ExecCompleted, hookResult(x, e.Result), e.IsError
	m.running--
	m.changed.forget(e.Read)
	status := ToolSucceeded
	if e.IsError {
		status = ToolFailed
	}
	acts := []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: status, Detail: firstLine(e.Result)}}
	if m.running > 0 {
		return acts
	}
	return m.finishBatch(acts)
}

// appendToolResults answers every call of the batch, in call order.
func (m *Machine) appendToolResults() {
	for _, x := range m.execs {
		m.history = append(m.history, Message{Role: RoleTool, ToolCallID: x.Call.ID, Content: x.Result})
	}
}

// finishBatch closes a tool batch: -> PostToolsHook + RunPostToolsHook
// when a mutating tool succeeded, else -> CallingLlm + SendLlmRequest.
func (m *Machine) finishBatch(acts []Action) []Action {
	m.appendToolResults()
	var changed []ToolCall
	for _, x := range m.execs {
		if x.Mutating && !x.IsError {
			changed = append(changed, x.Call)
		}
	}
	m.execs, m.execByID = nil, nil
	clear(m.proposals)
	if len(changed) > 0 {
		m.kind = PostToolsHook
		return append(acts, RunPostToolsHook{Turn: m.turn, Calls: changed})
	}
	return m.becomeCallingLlm(acts)
}

// onHookCompleted: PostToolsHook -> CallingLlm + SendLlmRequest. A failed
// hook, or a hook's note for the model, is told to the model in a message
// of its own.
func (m *Machine) onHookCompleted(e PostToolsHookCompleted) []Action {
	switch {
	case e.Failed:
		m.history = append(m.history, Message{Role: RoleUser, Content: "[loom] the post-tool hook failed: " + e.ActionTaken, Note: true})
	case e.Note != "":
		m.history = append(m.history, Message{Role: RoleUser, Content: "[loom] " + e.Note, Note: true})
	}
	return m.becomeCallingLlm(nil)
}

// onLlmError: CallingLlm -> Error + ScheduleRetry while retries are left,
// else DisplayError and the turn ends, its conversation still valid.
func (m *Machine) onLlmError(e LlmError) []Action {
	shown := 0
	if m.compaction == nil {
		shown = m.partial.Len()
	}
	request := m.request
	return m.retractIfReplaced(m.failRequest(e), request, shown)
}

// failRequest decides what follows a failed request: a retry, a
// compaction, or the end of the turn.
func (m *Machine) failRequest(e LlmError) []Action {
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	if e.Kind == ErrorContextLength {
		return m.onContextLengthError(e)
	}
	switch {
	case e.Retryable && m.retries < m.cfg.MaxRetries && e.RetryAfter <= m.cfg.MaxRetryAfter:
		return m.becomeError(e)
	case e.Retryable && e.RetryAfter > m.cfg.MaxRetryAfter:
		msg := fmt.Sprintf("the provider asked to wait %s before retrying, more than the %s loom waits: %s", e.RetryAfter, m.cfg.MaxRetryAfter, e.Message)
		return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: e.Kind, Message: msg}}, TurnFailed)
	case e.Retryable:
		msg := fmt.Sprintf("the model request failed after %d retries: %s", m.retries, e.Message)
		return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: e.Kind, Message: msg}}, TurnFailed)
	default:
		return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: e.Kind, Message: e.Message}}, TurnFailed)
	}
}

// becomeError waits for a retry: -> Error + ScheduleRetry.
func (m *Machine) becomeError(e LlmError) []Action {
	m.kind = Error
	m.retries++
	m.lastErr = &e
	delay := retryDelay(m.cfg, m.retries, m.request, e.RetryAfter)
	// The message already says what failed and the HTTP status ("rate
	// limited by the provider (HTTP 429): …"): said once, not after the
	// kind and status again.
	reason := e.Message
	if reason == "" {
		reason = string(e.Kind)
		if e.StatusCode != 0 {
			reason = fmt.Sprintf("%s, HTTP %d", reason, e.StatusCode)
		}
	}
	return []Action{ScheduleRetry{Turn: m.turn, Request: m.request, Attempt: m.retries, Delay: delay, Reason: reason, Kind: e.Kind}}
}

// abandonTurn closes whatever is in flight so the conversation stays
// valid: streamed text is kept as the assistant message, and every
// unanswered tool call gets a cancelled result.
func (m *Machine) abandonTurn() []Action {
	acts := []Action{CancelInFlight{Turn: m.turn}}
	switch m.kind {
	case CallingLlm:
		if m.compaction != nil {
			m.compaction, m.compactMsgs = nil, nil
		} else if text := m.partial.String(); text != "" {
			m.history = append(m.history, Message{Role: RoleAssistant, Content: text})
		}
	case ExecutingTools:
		for i := range m.execs {
			x := &m.execs[i]
			if x.Status != ExecCompleted {
				result := cancelledResult
				switch {
				case x.Call.ID == m.planCall:
					result = cancelledPlan
				case x.Status == ExecReviewing:
					result = m.cancelledReview(x.Call.ID)
				}
				x.Status, x.Result, x.IsError = ExecCompleted, result, true
				acts = append(acts, DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolCancelled})
			}
		}
		m.appendToolResults()
	}
	return acts
}

// endTurn returns to WaitingForUserInput, then starts the next queued
// input, if any.
func (m *Machine) endTurn(acts []Action, outcome TurnOutcome) []Action {
	acts = append(acts, WaitForInput{Turn: m.turn, Outcome: outcome, Usage: m.turnUsage})
	m.turn += m.dropped // the ids of inputs dropped meanwhile are used up
	m.dropped = 0
	m.kind = WaitingForUserInput
	m.retries = 0
	m.lastErr = nil
	m.execs, m.execByID, m.running = nil, nil, 0
	m.children.endBatch()
	clear(m.proposals)
	m.planCall, m.planText, m.stopTurn, m.fresh = "", "", false, ""
	m.stopHooks = false
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	m.compaction, m.compactMsgs = nil, nil
	return m.startQueued(acts)
}

// startQueued starts the next queued input, if any.
func (m *Machine) startQueued(acts []Action) []Action {
	if m.qhead < len(m.queue) {
		next := m.queue[m.qhead]
		m.queue[m.qhead] = UserInput{}
		m.qhead++
		if m.qhead == len(m.queue) {
			m.queue, m.qhead = m.queue[:0], 0
		}
		if next.Refused != "" {
			return append(acts, m.refuseTurn(next)...)
		}
		return append(acts, m.startTurn(next)...)
	}
	return acts
}

// becomeShuttingDown stops for good, closing the turn in flight first.
func (m *Machine) becomeShuttingDown() []Action {
	if m.kind == ShuttingDown {
		return nil
	}
	var acts []Action
	if m.busy() {
		acts = m.abandonTurn()
	}
	m.kind = ShuttingDown
	m.retries, m.lastErr = 0, nil
	m.execs, m.execByID, m.running = nil, nil, 0
	clear(m.proposals)
	return append(acts, Shutdown{})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
