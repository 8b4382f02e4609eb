package fsm

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidEvent is wrapped by the error Step returns for an event that
// is not valid in the current state. The machine is left unchanged.
var ErrInvalidEvent = errors.New("invalid event")

// ErrStaleEvent is wrapped by the error Step returns for an event that
// belongs to a request, turn or tool call that is no longer in flight,
// such as a late stream chunk after Cancel. The machine is left unchanged;
// callers drop such events.
var ErrStaleEvent = errors.New("stale event")

// ErrInternal is wrapped by the error Step returns if a transition
// panicked. It marks a bug in this package, never bad input.
var ErrInternal = errors.New("internal error")

// Machine is the agent state machine. It is not safe for concurrent use:
// one goroutine owns it.
type Machine struct {
	cfg Config

	kind      StateKind
	turn      uint64
	request   uint64
	iteration int
	retries   int
	lastErr   *LlmError
	// model is the model SelectModel chose, "" for the configured one.
	model string
	// effort is the reasoning effort SelectEffort chose, "" for the
	// configured one.
	effort string

	// history is the conversation. It is append-only: requests share its
	// backing array, so an element once written is never modified.
	history []Message

	// queue holds inputs received while busy; queue[qhead:] are pending.
	queue []UserInput
	qhead int
	// dropped counts the turn ids of inputs dropped while a turn was in
	// flight; the next turn starts after them.
	dropped uint64

	// partial is the assistant text streamed for the current request.
	partial strings.Builder
	// texts holds the DisplayMessage actions of text deltas.
	texts displaySlab
	// streaming tracks tool calls being streamed, for display only.
	streaming []streamingCall

	// execs is the current tool batch, in call order; execByID indexes it.
	execs    []ToolExecution
	execByID map[string]int
	running  int // execs not yet completed

	// turnUsage sums the responses of the current (or last) turn,
	// totalUsage those of the whole conversation (see Usage).
	turnUsage  Usage
	totalUsage Usage

	// turnStart is the index in history of the current (or last) turn's
	// user message; turnStarts lists those of the turns since the last
	// compaction.
	turnStart  int
	turnStarts []int
	// elided is history as requests send it, old tool results elided
	// (elision.go).
	elided elision
	// prompt is the server's count of the last response's prompt
	// (prompt_tokens); sentMsgs is the length of the request in flight.
	prompt   promptCount
	sentMsgs int
	// sentEstimate is the token estimate of the request in flight.
	sentEstimate int64
	// cut is what the server showed of its real window by cutting a
	// prompt (see truncation.go).
	cut serverCut
	// compaction is the compaction in flight, compactMsgs its request.
	compaction  *compaction
	compactMsgs []Message
	// ctxRetried marks a turn that already compacted after a
	// context-length error.
	ctxRetried bool
	// emptyRetried marks a turn whose model already answered nothing
	// once (no text, no call, no reasoning): asked again, once.
	emptyRetried bool

	// changed holds the paths of FilesChanged events not yet told to the
	// model (fileschanged.go).
	changed changedFiles
	// notes are other messages for the model, appended before its next
	// request (a files rewind).
	notes []string

	// proposals are the batch's proposals waiting for the user's review,
	// by id.
	proposals map[string]*pendingProposal
	// checkpoints are the turns one can rewind to, oldest first; redo is
	// the stack of rewinds since the last prompt.
	checkpoints timeline
	redo        []rewound

	// mode is the conversation's mode ("" is agent); told is the mode
	// the conversation's messages last told the model (see flushMode).
	mode, told Mode
	// plan is the todo list (update_plan).
	plan []PlanItem
	// planCall is the propose_plan call waiting for the user's decision
	// ("" for none), planText its plan.
	planCall, planText string
	// stopTurn ends the turn instead of the next model request (a plan
	// decision that asked for it); fresh is then the prompt of the new
	// conversation to start.
	stopTurn bool
	fresh    string
	// stopHooks: the machine waits in PostToolsHook for the Stop hooks'
	// HooksDecided; stopContinued counts how often they continued the
	// turn.
	stopHooks     bool
	stopContinued int

	// children are the conversation's subagents (see spawn.go).
	children brood
}

type streamingCall struct {
	index    int
	id, name string
}

// New returns a machine in WaitingForUserInput. A non-empty
// cfg.SystemPrompt becomes the conversation's first message.
func New(cfg Config) *Machine {
	m := &Machine{cfg: cfg.withDefaults()}
	m.turn, m.request = cfg.ContinueFrom.Turn, cfg.ContinueFrom.Request
	if m.cfg.SystemPrompt != "" {
		m.history = append(m.history, Message{Role: RoleSystem, Content: m.cfg.SystemPrompt})
	}
	return m
}

// State returns a read-only view of the current state.
func (m *Machine) State() State {
	s := State{
		Kind:       m.kind,
		Turn:       m.turn,
		Request:    m.request,
		Iteration:  m.iteration,
		Retries:    m.retries,
		Queued:     len(m.queue) - m.qhead,
		Messages:   len(m.history),
		Compacting: m.compaction != nil,
		Redo:       len(m.redo),
		Mode:       m.Mode(),
	}
	if m.lastErr != nil {
		e := *m.lastErr
		s.LastError = &e
	}
	if len(m.execs) > 0 {
		s.Executions = append([]ToolExecution(nil), m.execs...)
	}
	return s
}

// Messages returns the conversation so far. The slice shares the machine's
// storage: do not modify its elements.
func (m *Machine) Messages() []Message {
	return m.history[:len(m.history):len(m.history)]
}

// Queued returns the inputs waiting for the current turn to end, in order.
func (m *Machine) Queued() []string {
	out := make([]string, 0, len(m.queue)-m.qhead)
	for _, in := range m.queue[m.qhead:] {
		out = append(out, in.Text)
	}
	return out
}

// Step applies ev and returns the actions the caller must perform, in
// order. It returns an error wrapping ErrInvalidEvent or ErrStaleEvent,
// and no actions, when ev does not apply; the machine is then unchanged.
func (m *Machine) Step(ev Event) (acts []Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			acts, err = nil, fmt.Errorf("fsm: %w: %v while stepping %s in %s", ErrInternal, r, describeEvent(ev), m.kind)
		}
	}()
	if ev == nil {
		return nil, fmt.Errorf("fsm: %w: nil event in %s", ErrInvalidEvent, m.kind)
	}
	if err := m.check(ev); err != nil {
		return nil, err
	}
	return m.apply(ev), nil
}

func describeEvent(ev Event) string {
	if ev == nil {
		return "<nil>"
	}
	return ev.Describe()
}

// busy reports whether a turn is in flight.
func (m *Machine) busy() bool {
	switch m.kind {
	case CallingLlm, ExecutingTools, PostToolsHook, Error:
		return true
	}
	return false
}

func (m *Machine) invalid(ev Event, why string) error {
	if why != "" {
		why = ": " + why
	}
	return fmt.Errorf("fsm: %w: %s in state %s%s", ErrInvalidEvent, ev.Describe(), m.kind, why)
}

func (m *Machine) stale(ev Event) error {
	return fmt.Errorf("fsm: %w: %s in state %s (turn %d, request %d)", ErrStaleEvent, ev.Describe(), m.kind, m.turn, m.request)
}

// check decides, without changing anything, whether ev applies now: first
// whether what it is addressed to is live (see address.go), then the rule
// of its kind.
func (m *Machine) check(ev Event) error {
	if m.kind == ShuttingDown {
		if _, ok := ev.(ShutdownRequested); ok {
			return nil
		}
		return m.invalid(ev, "the machine is shutting down")
	}
	switch e := ev.(type) {
	case toRequest:
		req, liveIn := e.request()
		return m.checkRequest(ev, req, m.kind == liveIn)
	case toCall:
		return m.checkCall(e)
	case betweenTurns:
		if m.kind != WaitingForUserInput {
			return m.invalid(ev, e.betweenTurns())
		}
	case UserInput:
		if strings.TrimSpace(e.Text) == "" && len(e.Images) == 0 {
			return m.invalid(ev, "empty input")
		}
	case FilesChanged:
		if len(e.Paths) == 0 {
			return m.invalid(ev, "no paths")
		}
	case Cancel:
		if !m.busy() {
			return m.invalid(ev, "nothing in flight to cancel")
		}
	case PostToolsHookCompleted:
		return m.checkHookCompleted(e)
	case HooksDecided:
		return m.checkHooks(e)
	case ChangesProposed:
		return m.checkProposed(e)
	case ChangesDecided:
		return m.checkDecided(e)
	case Rewind:
		return m.checkRewind(e)
	case Redo:
		return m.checkRedo(e)
	case SetMode:
		return m.checkSetMode(e)
	case PlanDecided:
		return m.checkPlanDecided(e)
	case Reset, DropQueued, ShutdownRequested, SelectModel, SelectEffort, Load:
	default:
		return m.invalid(ev, "unknown event type")
	}
	return nil
}

// checkRequest validates an event addressed to model request req, which
// applies only when live (the request is current in the right state).
func (m *Machine) checkRequest(ev Event, req uint64, live bool) error {
	switch {
	case live && req == m.request:
		return nil
	case req <= m.request:
		return m.stale(ev)
	default:
		return m.invalid(ev, "unknown request")
	}
}

func (m *Machine) checkTool(ev Event, turn uint64, callID string) error {
	if m.kind != ExecutingTools || turn != m.turn {
		if turn <= m.turn {
			return m.stale(ev)
		}
		return m.invalid(ev, "unknown turn")
	}
	i, ok := m.execByID[callID]
	if !ok {
		return m.invalid(ev, "no such tool call in this batch")
	}
	if m.execs[i].Status == ExecCompleted {
		return m.invalid(ev, "tool call already completed")
	}
	return nil
}

// checkCall validates an event about call of the batch: the call runs,
// and a call waiting for the user's review takes only the review; a
// subagent's events also need its child (spawn.go).
func (m *Machine) checkCall(ev toCall) error {
	turn, callID := ev.call()
	switch ev.(type) {
	case SpawnRequested:
		return m.checkChild(ev, turn, callID, false)
	case ChildUsage, ChildTimedOut, ChildStopAsked, ChildFinished:
		return m.checkChild(ev, turn, callID, true)
	}
	if err := m.checkTool(ev, turn, callID); err != nil {
		return err
	}
	if m.execs[m.execByID[callID]].Status != ExecReviewing {
		return nil
	}
	if _, ok := ev.(ApprovalDecided); ok {
		return m.invalid(ev, "the call waits for a review, not an approval")
	}
	return m.invalid(ev, "the call waits for the user's review")
}

// apply performs a transition that check accepted.
func (m *Machine) apply(ev Event) []Action {
	switch e := ev.(type) {
	case toRequest:
		return m.applyModelEvent(e)
	case toCall:
		return m.applyCallEvent(e)
	case UserInput:
		if m.busy() {
			m.queue = append(m.queue, e)
			return nil
		}
		if e.Refused != "" {
			return m.refuseTurn(e)
		}
		return m.startTurn(e)
	case Compact:
		return m.onCompact()
	case PostToolsHookCompleted:
		return m.onHookCompleted(e)
	case Cancel:
		acts := m.abandonTurn()
		return m.endTurn(acts, TurnCancelled)
	case FilesChanged:
		m.changed.add(e.Paths) // told at the next request (flushChanged)
		return nil
	case Reset:
		return m.onReset()
	case SelectModel:
		return m.onSelectModel(e)
	case SelectEffort:
		return m.onSelectEffort(e)
	case Load:
		return m.onLoad(e)
	case DropQueued:
		m.dropQueue()
		return nil
	case AdvanceIDs:
		m.advanceIDs(e.IDs)
		return nil
	case HooksDecided:
		return m.onHooksDecided(e)
	case ChangesProposed:
		return m.onChangesProposed(e)
	case ChangesDecided:
		return m.onChangesDecided(e)
	case Rewind:
		return m.onRewind(e)
	case Redo:
		return m.onRedo()
	case SetMode:
		return m.onSetMode(e)
	case PlanDecided:
		return m.onPlanDecided(e)
	case ShutdownRequested:
		return m.becomeShuttingDown()
	}
	return nil
}

// applyModelEvent performs an event of the model request in flight: its
// stream (shown unless it is a compaction's), its end, its failure, and
// the retry after one.
func (m *Machine) applyModelEvent(ev toRequest) []Action {
	switch e := ev.(type) {
	case LlmTextDelta:
		m.partial.WriteString(e.Text)
		if m.compaction != nil {
			return nil
		}
		return m.texts.display(m.turn, e.Text)
	case LlmToolCallDelta:
		if m.compaction != nil {
			return nil
		}
		return m.onToolCallDelta(e)
	case LlmReasoningDelta:
		return m.onReasoningDelta(e)
	case LlmCompleted:
		return m.becomeProcessingLlmResponse(e)
	case LlmError:
		return m.onLlmError(e)
	case RetryTimeoutFired:
		return m.retryRequest()
	}
	return nil
}

// applyCallEvent performs an event about a call of the batch: its
// progress, its result, the user's approval, and its subagent's life
// (spawn.go).
func (m *Machine) applyCallEvent(ev toCall) []Action {
	switch e := ev.(type) {
	case ToolProgress:
		return m.onToolProgress(e)
	case ToolCompleted:
		return m.onToolCompleted(e)
	case ApprovalDecided:
		return m.onApprovalDecided(e)
	case Elicited:
		return m.onElicited(e)
	}
	return m.applyChild(ev)
}

// Reconfigure replaces the machine's configuration (limits, retry policy,
// tools) from the next transition on. A changed system prompt replaces the
// conversation's system message when the next turn starts, not in the
// middle of a turn.
func (m *Machine) Reconfigure(cfg Config) {
	if cfg.ContextWindow != m.cfg.ContextWindow {
		m.cut.forget()
	}
	m.cfg = cfg.withDefaults()
}
