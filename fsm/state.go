package fsm

// StateKind names a state of the machine.
type StateKind int

// The states. ProcessingLlmResponse is transient: the machine passes
// through it inside one Step and it is never observable afterwards.
const (
	WaitingForUserInput StateKind = iota
	CallingLlm
	ProcessingLlmResponse
	ExecutingTools
	PostToolsHook
	Error
	ShuttingDown
)

var stateNames = [...]string{
	WaitingForUserInput:   "WaitingForUserInput",
	CallingLlm:            "CallingLlm",
	ProcessingLlmResponse: "ProcessingLlmResponse",
	ExecutingTools:        "ExecutingTools",
	PostToolsHook:         "PostToolsHook",
	Error:                 "Error",
	ShuttingDown:          "ShuttingDown",
}

// String returns the state's name.
func (k StateKind) String() string {
	if k >= 0 && int(k) < len(stateNames) {
		return stateNames[k]
	}
	return "StateKind(?)"
}

// ExecStatus is the progress of one tool execution.
type ExecStatus string

// An execution moves Pending -> Running -> Completed. Under review a
// mutating call goes Running -> Reviewing when it proposes its changes,
// then Running again while the accepted hunks are applied (or Completed
// at once when all were rejected).
const (
	ExecPending   ExecStatus = "pending"
	ExecRunning   ExecStatus = "running"
	ExecReviewing ExecStatus = "reviewing"
	ExecCompleted ExecStatus = "completed"
)

// ToolExecution is one tool call of the current batch and where it is.
type ToolExecution struct {
	Call     ToolCall
	Mutating bool
	Status   ExecStatus
	// Result and IsError are set once Status is ExecCompleted.
	Result  string
	IsError bool
	// Progress is the last ToolProgress message.
	Progress string
	// hookNotes are what the call's hooks added to its result.
	hookNotes []string
}

// State is a read-only view of the machine, as returned by [Machine.State].
// Only the fields that belong to Kind are meaningful.
type State struct {
	Kind StateKind
	// Turn is the current (or last) user turn, counted from 1.
	Turn uint64
	// Request is the current (or last) model request, counted from 1.
	Request uint64
	// Iteration counts the model requests of this turn, retries excluded.
	Iteration int
	// Retries counts retries of the current request (CallingLlm, Error).
	Retries int
	// Executions is the tool batch (ExecutingTools), in call order.
	Executions []ToolExecution
	// LastError is the error that led to the Error state.
	LastError *LlmError
	// Queued counts inputs waiting for the current turn to end.
	Queued int
	// Messages counts the conversation's messages.
	Messages int
	// Compacting is set while a compaction request is in flight.
	Compacting bool
	// Redo counts the rewinds a Redo can still undo.
	Redo int
	// Mode is the conversation's mode.
	Mode Mode
}
