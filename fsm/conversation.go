package fsm

import (
	"encoding/json"
)

// Role is the author of a conversation message, as the OpenAI Chat
// Completions API names it.
type Role string

// The roles of the OpenAI wire shape.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation, in the OpenAI wire shape.
// An assistant message may carry ToolCalls; every one of them is answered
// by exactly one later message with Role RoleTool and the call's ID in
// ToolCallID, in the order of the calls.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Reasoning is the reasoning of an assistant message, kept only for
	// servers that require it back (see LlmCompleted.Reasoning). It is not
	// answer text; which requests send it is the provider's business.
	Reasoning string `json:"reasoning,omitempty"`
	// Note marks a user-role message that is loom's own note to the model
	// (files changed on disk, a rewind, a hook's note, the compacted
	// summary), not a prompt of the user: a client shows it as a notice,
	// and it is no turn of its own.
	Note bool `json:"note,omitempty"`
	// Images are the pictures attached to a user prompt, by reference
	// (see Image).
	Images []Image `json:"images,omitempty"`
	// Opaque is what the server that wrote this assistant message requires
	// sent back with it (reasoning items, thinking blocks and their
	// signatures, reasoning details), kept for the provider that made it.
	// The machine never reads it.
	Opaque Opaque `json:"opaque,omitzero"`
}

// Opaque is data a provider keeps with a message and sends back unchanged.
// It is comparable: two Opaques are the same data when they are ==.
type Opaque struct {
	// API names the wire format Data belongs to ("responses", "messages",
	// "openrouter"): a provider sends back only its own.
	API string `json:"api"`
	// Data is the provider's encoding, never interpreted outside it.
	Data string `json:"data"`
}

// ToolCall is one function call requested by the model. Arguments is the
// JSON text the model produced; the machine guarantees it is valid JSON by
// the time the call reaches [ExecuteTools].
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
	// Signature is an opaque token the server attached to the call and
	// requires back with it within the turn (Gemini's thought
	// signature); "" for most servers.
	Signature string
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	Signature string `json:"signature,omitempty"`
}

// MarshalJSON writes the call in the OpenAI wire shape:
// {"id":…,"type":"function","function":{"name":…,"arguments":…}}.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	var w wireToolCall
	w.ID, w.Type = c.ID, "function"
	w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
	w.Signature = c.Signature
	return json.Marshal(w)
}

// UnmarshalJSON reads the OpenAI wire shape written by MarshalJSON.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.ID, c.Name, c.Arguments, c.Signature = w.ID, w.Function.Name, w.Function.Arguments, w.Signature
	return nil
}
