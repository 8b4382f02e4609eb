package fsm

import "time"

// Action is an output of [Machine.Step]: something the caller must do.
// Actions are returned in the order they must be performed.
type Action interface {
	Describe() string
	isAction()
}

// SendLlmRequest asks the caller to stream a model response for the
// conversation Messages, and to feed the stream back as LlmTextDelta,
// LlmToolCallDelta and then exactly one LlmCompleted or LlmError, each
// carrying Request.
//
// Messages shares its backing array with the machine's history: the caller
// must not modify its elements. Appending to it is safe (its capacity is
// capped at its length). Every assistant tool call in it has exactly one
// tool result, in call order.
type SendLlmRequest struct {
	Turn      uint64
	Request   uint64
	Iteration int
	Messages  []Message
	// TurnStart is the index in Messages of the current turn's first
	// message: reasoning and signatures the server requires back are sent
	// only with the messages from there on, never across turns.
	TurnStart int
	// Compaction marks a compaction request: its answer (text only; send
	// no tools) is a summary of the conversation, not shown as an answer.
	Compaction bool
	// Model is the model to ask (SelectModel); "" for the configured one.
	Model string
	// Effort is the reasoning effort to ask with (SelectEffort); "" for
	// the configured one.
	Effort string
}

// ExecuteTools asks the caller to run Calls and to feed back, for each,
// any number of ToolProgress and then exactly one ToolCompleted. Calls
// whose Mutating is true must run one at a time in the given order; the
// others may run in parallel.
type ExecuteTools struct {
	Turn  uint64
	Calls []ToolCall
	// Mutating[i] tells whether Calls[i] is a mutating tool, per Config.
	Mutating []bool
	// Review (Config.ReviewEdits) asks that a mutating call that would
	// change files write nothing and report ChangesProposed instead.
	Review bool
	// ReadOnly says the conversation is in a read-only mode: the calls
	// of RunsReadOnly tools among Calls must run with no write access
	// (they are listed as non-mutating), or not at all.
	ReadOnly bool
}

// RunPostToolsHook asks the caller to run the post-tool hook (save the
// touched documents, commit what the tools changed) and then to feed back
// PostToolsHookCompleted. Calls are the mutating calls that succeeded in
// this batch.
type RunPostToolsHook struct {
	Turn  uint64
	Calls []ToolCall
}

// DisplayMessage asks the caller to show a piece of assistant text. The
// action is a *DisplayMessage, the one pointer among the actions: the
// streaming path hands them out without allocating (see displaySlab). It
// is never modified after Step returns it.
type DisplayMessage struct {
	Turn uint64
	Text string
}

// ToolStatus is the lifecycle of a tool call as the user sees it.
type ToolStatus string

// The tool statuses, in lifecycle order. Streaming is a call the model is
// still writing; the rest follow the Pending -> Running -> Completed
// execution of [ToolExecution].
const (
	ToolStreaming ToolStatus = "streaming"
	ToolPending   ToolStatus = "pending"
	ToolRunning   ToolStatus = "running"
	ToolSucceeded ToolStatus = "succeeded"
	ToolFailed    ToolStatus = "failed"
	ToolCancelled ToolStatus = "cancelled"
)

// DisplayToolCall asks the caller to show a tool call's status. Detail is
// a progress message or the first line of the result.
type DisplayToolCall struct {
	Turn   uint64
	CallID string
	Name   string
	Status ToolStatus
	Detail string
	// Arguments, when set (status pending), are the arguments the call
	// runs with instead of the model's: a PreToolUse hook rewrote them.
	Arguments string
}

// DisplayError asks the caller to show an error to the user. Whether the
// turn goes on (a retry follows) or ended (a WaitForInput follows) is told
// by the other actions of the same step.
type DisplayError struct {
	Turn    uint64
	Kind    ErrorKind
	Message string
}

// ScheduleRetry asks the caller to start a timer of Delay and to feed
// RetryTimeoutFired{Request} when it fires. Attempt counts retries from 1.
type ScheduleRetry struct {
	Turn    uint64
	Request uint64
	Attempt int
	Delay   time.Duration
	Reason  string
	// Kind classifies the error retried, as DisplayError.Kind does.
	Kind ErrorKind
}

// CancelInFlight asks the caller to cancel the model stream, tool runs,
// hook and retry timer of turn Turn, killing child processes. Late events
// from them are rejected by the machine as stale.
type CancelInFlight struct {
	Turn uint64
}

// TurnOutcome says how a turn ended.
type TurnOutcome string

// The ways a turn ends.
const (
	TurnDone      TurnOutcome = "done"
	TurnFailed    TurnOutcome = "failed"
	TurnCancelled TurnOutcome = "cancelled"
)

// WaitForInput tells the caller that turn Turn is over. If input is queued
// the next actions start the next turn; otherwise the machine now waits
// for UserInput. Usage sums the turn's model responses.
type WaitForInput struct {
	Turn    uint64
	Outcome TurnOutcome
	Usage   Usage
}

// Shutdown asks the caller to stop: flush and release everything. It
// comes after a CancelInFlight when a turn was in flight.
type Shutdown struct{}

func (SendLlmRequest) isAction()   {}
func (ExecuteTools) isAction()     {}
func (RunPostToolsHook) isAction() {}
func (*DisplayMessage) isAction()  {}
func (DisplayToolCall) isAction()  {}
func (DisplayError) isAction()     {}
func (ScheduleRetry) isAction()    {}
func (CancelInFlight) isAction()   {}
func (WaitForInput) isAction()     {}
func (Shutdown) isAction()         {}
