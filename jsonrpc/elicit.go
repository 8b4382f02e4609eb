package jsonrpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// MethodElicit is the server's request for an MCP server's question
// (elicitation) to a client that declared experimental.loom.elicit: the
// client shows the form (or the URL, which the user opens) and answers
// with the action and what the user typed. A client without it is asked
// through window/showMessageRequest (a URL, or a form's defaults).
const MethodElicit = "loom/elicit"

// ElicitParams are loom/elicit's params.
type ElicitParams struct {
	// Folder is the workspace folder's path.
	Folder string `json:"folder"`
	// Conversation is the id of the conversation whose tool call asks.
	Conversation string `json:"conversation"`
	Turn         uint64 `json:"turn"`
	// Tool and CallID are the tool call the MCP server runs.
	Tool   string `json:"tool"`
	CallID string `json:"callId"`
	// Server is the MCP server's name; Message its question.
	Server  string `json:"server"`
	Message string `json:"message"`
	// Mode is "form" (show Fields) or "url" (show URL for the user to
	// open; the client never opens it unasked).
	Mode string `json:"mode"`
	URL  string `json:"url,omitempty"`
	// Fields is the form, required fields first. A field whose secret is
	// set is typed masked and never shown.
	Fields []elicit.Field `json:"fields,omitempty"`
	// Problems, when set, say why the last answer was not sent (each
	// names its field): show them and ask again.
	Problems []string `json:"problems,omitempty"`
	// Values are the last answer's values (secrets left out): fill the
	// form with them when asking again.
	Values map[string]string `json:"values,omitempty"`
}

// ElicitResult is loom/elicit's result.
type ElicitResult struct {
	// Action is "accept", "decline" (the user said no) or "cancel" (the
	// user dismissed the question).
	Action string `json:"action"`
	// Values are what the user typed per field name (accept); an empty
	// or missing value takes the field's default. Booleans as
	// "true"/"false", a multiple choice comma-separated.
	Values map[string]string `json:"values,omitempty"`
}

// Elicit asks the client with loom/elicit when it declared
// experimental.loom.elicit; otherwise it returns ErrUnsupported (the
// conversation then asks through Approve).
func (e *editor) Elicit(ctx context.Context, q workspace.Elicitation) (workspace.ElicitAnswer, error) {
	s := e.s
	s.mu.Lock()
	ok := s.caps.elicit
	s.mu.Unlock()
	if !ok {
		return workspace.ElicitAnswer{}, workspace.ErrUnsupported
	}
	r := q.Request
	params := &ElicitParams{Folder: q.Folder, Conversation: q.Conversation, Turn: q.Turn, Tool: q.Tool, CallID: q.CallID,
		Server: r.Server, Message: r.Message, Mode: r.Mode, URL: r.URL, Fields: r.Fields, Problems: q.Problems, Values: q.Values}
	var res ElicitResult
	if err := s.callClient(ctx, MethodElicit, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return workspace.ElicitAnswer{}, workspace.ErrUnsupported
		}
		return workspace.ElicitAnswer{}, fmt.Errorf("%s: %w", MethodElicit, err)
	}
	return workspace.ElicitAnswer{Answer: elicit.Answer{Action: res.Action, Values: res.Values}}, nil
}
