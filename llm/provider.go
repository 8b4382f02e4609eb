package llm

import (
	"context"
	"encoding/json"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// ToolSchema describes one tool to the model.
type ToolSchema struct {
	// Name is the function name the model calls.
	Name string
	// Description is the text the model reads to decide when to call it.
	Description string
	// Parameters is a JSON Schema object for the arguments; empty means
	// "no parameters" and is sent as an empty object schema.
	Parameters json.RawMessage
}

// Request is one model request.
type Request struct {
	// ID stamps the Request field of every event emitted for this request.
	ID uint64
	// Messages is the conversation, in the OpenAI wire shape. It is only
	// read, never modified.
	Messages []fsm.Message
	// TurnStart is the index in Messages of the current turn's first
	// message: what the server requires echoed (reasoning, signatures)
	// is sent only with the messages from there on.
	TurnStart int
	// Tools are the functions the model may call.
	Tools []ToolSchema
	// Model, when set, is the model to ask instead of the configured one
	// (the conversation switched models: fsm.SelectModel).
	Model string
	// ReasoningEffort, when set, is the effort to ask with instead of
	// the configured one (the conversation chose one: fsm.SelectEffort);
	// one of the efforts ValidReasoningEffort accepts.
	ReasoningEffort string
	// CacheKey, when set, names the conversation to the server's prompt
	// cache (OpenAI's prompt_cache_key): requests sharing it share a
	// prefix.
	CacheKey string
	// Images reads the pictures the messages reference (fsm.Image); nil
	// when none may be sent. Every wire API reads them through it.
	Images ImageSource
}

// Provider streams a model response.
type Provider interface {
	// Stream calls emit, in order, for each event of the response, ending
	// with exactly one fsm.LlmCompleted or fsm.LlmError — unless ctx is
	// cancelled, in which case it returns promptly and may emit nothing
	// more. It never panics, never hangs, and leaves no goroutine behind
	// when it returns. emit is called from the goroutine that called
	// Stream.
	Stream(ctx context.Context, req Request, emit func(fsm.Event))
}
