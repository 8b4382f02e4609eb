package fsm

import "time"

// Event is an input to [Machine.Step]. The concrete types are the structs
// in this file; Describe gives each a stable one-line text.
type Event interface {
	Describe() string
	isEvent()
}

// UserInput is a prompt from the user. While the machine is busy it is
// queued, in order, and started when the current turn ends.
type UserInput struct {
	Text string
	// Images are pictures attached to the prompt, by reference.
	Images []Image `json:",omitempty"`
	// HookContext is what the UserPromptSubmit and SessionStart hooks
	// added for the model: it follows the prompt in the user message.
	HookContext string `json:",omitempty"`
	// Refused, when set, is why a UserPromptSubmit hook refused the
	// prompt: the turn ends at once, the prompt is given back to the user
	// and never sent to the model.
	Refused string `json:",omitempty"`
}

// LlmTextDelta is a piece of assistant text streamed for request Request.
type LlmTextDelta struct {
	Request uint64
	Text    string
}

// LlmToolCallDelta is a piece of a tool call streamed for request Request.
// Index identifies the call within the response; ID and Name are usually
// sent once, in the first delta of a call; ArgumentsDelta is a fragment of
// the JSON arguments. The deltas are for display only: the complete calls
// arrive in [LlmCompleted].
type LlmToolCallDelta struct {
	Request        uint64
	Index          int
	ID             string
	Name           string
	ArgumentsDelta string
}

// LlmCompleted ends request Request successfully. ToolCalls holds the
// complete, accumulated calls in the order the model made them; the
// assistant text is what the LlmTextDelta events of the request carried.
type LlmCompleted struct {
	Request      uint64
	ToolCalls    []ToolCall
	Usage        Usage
	FinishReason string
	// Reasoning is the response's reasoning, set only when the server
	// requires it sent back (DeepSeek's thinking mode); the assistant
	// message keeps it.
	Reasoning string `json:",omitempty"`
	// Opaque is what the server requires sent back with this response
	// (see Message.Opaque); the assistant message keeps it.
	Opaque Opaque `json:",omitzero"`
}

// ErrorKind classifies a model error for display and for the retry
// decision made by the provider.
type ErrorKind string

// The error kinds a provider reports.
const (
	ErrorRateLimited   ErrorKind = "rate_limited"
	ErrorServer        ErrorKind = "server"
	ErrorNetwork       ErrorKind = "network"
	ErrorIdle          ErrorKind = "idle"
	ErrorAuth          ErrorKind = "auth"
	ErrorBadRequest    ErrorKind = "bad_request"
	ErrorContextLength ErrorKind = "context_length"
	ErrorNotFound      ErrorKind = "not_found"
	ErrorStream        ErrorKind = "stream"
	ErrorOther         ErrorKind = "other"
)

// LlmError ends request Request with a failure. Retryable says whether the
// same request may succeed later; RetryAfter is the server's own minimum
// delay (zero when it gave none). Message is the reason in words, kept as
// the server said it.
type LlmError struct {
	Request    uint64
	Kind       ErrorKind
	StatusCode int
	Retryable  bool
	RetryAfter time.Duration
	Message    string
}

// ToolProgress reports that call CallID of turn Turn is running, with an
// optional progress message.
type ToolProgress struct {
	Turn    uint64
	CallID  string
	Message string
}

// ToolCompleted delivers the result of call CallID of turn Turn. IsError
// marks a result the model should read as a failure ("tool error: …").
type ToolCompleted struct {
	Turn    uint64
	CallID  string
	Result  string
	IsError bool
	// Read names the files (relative paths) whose text on disk, as the
	// call completes, is what the call gave the model: a FilesChanged
	// note pending for them is dropped (the model has the new text).
	Read []string `json:",omitempty"`
}

// PostToolsHookCompleted ends the post-tool hook of turn Turn.
// ActionTaken says what the hook did ("committed 1a2b3c4: …", "no git
// repository"). Failed marks a hook that could not do its job; the model
// is told, so it can react.
type PostToolsHookCompleted struct {
	Turn        uint64
	ActionTaken string
	Failed      bool
	// Note, when set (and the hook did not fail), is what the model
	// should know of the hook's outcome to act on it (files left
	// uncommitted, a command's changes waiting for the user's decision);
	// it is told in a message of its own.
	Note string `json:",omitempty"`
}

// RetryTimeoutFired tells the machine that the delay of the [ScheduleRetry]
// issued after request Request has elapsed.
type RetryTimeoutFired struct {
	Request uint64
}

// Cancel stops the turn in flight. Queued input is kept and starts next.
type Cancel struct{}

// ShutdownRequested stops the machine for good, from any state.
type ShutdownRequested struct{}

func (UserInput) isEvent()              {}
func (LlmTextDelta) isEvent()           {}
func (LlmToolCallDelta) isEvent()       {}
func (LlmCompleted) isEvent()           {}
func (LlmError) isEvent()               {}
func (ToolProgress) isEvent()           {}
func (ToolCompleted) isEvent()          {}
func (PostToolsHookCompleted) isEvent() {}
func (RetryTimeoutFired) isEvent()      {}
func (Cancel) isEvent()                 {}
func (ShutdownRequested) isEvent()      {}
