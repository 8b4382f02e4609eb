package fsm

// What an event is addressed to. Most events name the model request, the
// tool call or the turn they are about; check reads the address off the
// event, through the small interfaces below, before it looks at anything
// the event says.

// toRequest is an event about one model request: it applies while that
// request is the machine's current one and the machine is in state
// liveIn; an older request's event is stale.
type toRequest interface {
	Event
	request() (id uint64, liveIn StateKind)
}

func (e LlmTextDelta) request() (uint64, StateKind)      { return e.Request, CallingLlm }
func (e LlmToolCallDelta) request() (uint64, StateKind)  { return e.Request, CallingLlm }
func (e LlmReasoningDelta) request() (uint64, StateKind) { return e.Request, CallingLlm }
func (e LlmCompleted) request() (uint64, StateKind)      { return e.Request, CallingLlm }
func (e LlmError) request() (uint64, StateKind)          { return e.Request, CallingLlm }
func (e RetryTimeoutFired) request() (uint64, StateKind) { return e.Request, Error }

// toCall is an event about one tool call of the current batch (or of its
// subagent): it applies while the call runs.
type toCall interface {
	Event
	call() (turn uint64, callID string)
}

func (e ToolProgress) call() (uint64, string)    { return e.Turn, e.CallID }
func (e ToolCompleted) call() (uint64, string)   { return e.Turn, e.CallID }
func (e ApprovalDecided) call() (uint64, string) { return e.Turn, e.CallID }
func (e SpawnRequested) call() (uint64, string)  { return e.Turn, e.CallID }
func (e ChildUsage) call() (uint64, string)      { return e.Turn, e.CallID }
func (e ChildTimedOut) call() (uint64, string)   { return e.Turn, e.CallID }
func (e ChildStopAsked) call() (uint64, string)  { return e.Turn, e.CallID }
func (e ChildFinished) call() (uint64, string)   { return e.Turn, e.CallID }

// betweenTurns is an event that applies only while the machine waits for
// input; why says so when it does not.
type betweenTurns interface {
	Event
	betweenTurns() (why string)
}

func (Compact) betweenTurns() string    { return "compaction runs between turns" }
func (AdvanceIDs) betweenTurns() string { return "ids advance only between turns" }
