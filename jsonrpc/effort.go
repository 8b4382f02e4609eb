package jsonrpc

import (
	"context"
	"errors"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// CmdSetEffort sets the conversation's reasoning effort: SetEffortArgs
// -> SetEffortResult.
const CmdSetEffort = "loom.setEffort"

// SetEffortArgs are loom.setEffort's arguments: Effort is required (""
// goes back to [model] reasoning_effort).
type SetEffortArgs struct {
	URI          string  `json:"uri,omitempty"`
	Conversation string  `json:"conversation,omitempty"`
	Effort       *string `json:"effort"`
}

// SetEffortResult is loom.setEffort's reply: the effort in force now
// ("" when neither the conversation nor the configuration sets one),
// and the efforts the APIs take.
type SetEffortResult struct {
	Folder  string   `json:"folder"`
	Effort  string   `json:"effort"`
	Efforts []string `json:"efforts"`
}

func (h commandHandler) runSetEffort(ctx context.Context, a SetEffortArgs) (any, error) {
	s := h.s
	if a.Effort == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, `%s: effort is required (one of %s, or "" for [model] reasoning_effort)`,
			CmdSetEffort, strings.Join(config.ReasoningEfforts, ", "))
	}
	sess, err := s.session(CmdSetEffort, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	now, err := sess.Controls().SetEffort(ctx, *a.Effort)
	if errors.Is(err, workspace.ErrBadEffort) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdSetEffort, err)
	}
	if err != nil {
		return nil, err
	}
	return &SetEffortResult{Folder: sess.Folder().Path(), Effort: now, Efforts: append([]string{}, config.ReasoningEfforts...)}, nil
}
