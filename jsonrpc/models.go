package jsonrpc

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// The model commands.
const (
	// CmdModels lists the models the server offers: ModelArgs ->
	// ModelsWire.
	CmdModels = "loom.models"
	// CmdSetModel switches the conversation's model: ModelArgs (with
	// Model) -> SetModelResult.
	CmdSetModel = "loom.setModel"
)

// ModelArgs select a conversation (Conversation, by id; "" is the
// folder's most recent) and, for loom.setModel, the model ("" = back to
// model.name).
type ModelArgs struct {
	URI          string `json:"uri,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Model        string `json:"model,omitempty"`
}

// ModelEntry is one model of the list, as the panel draws it.
type ModelEntry struct {
	ID string `json:"id"`
}

// ModelsWire is loom.models' reply on the wire: models as objects.
type ModelsWire struct {
	Folder     string       `json:"folder"`
	Current    string       `json:"current"`
	Configured string       `json:"configured"`
	Models     []ModelEntry `json:"models"`
	Error      string       `json:"error,omitempty"`
}

// SetModelArgs are loom.setModel's arguments: Model is required (""
// switches back to model.name).
type SetModelArgs struct {
	URI          string  `json:"uri,omitempty"`
	Conversation string  `json:"conversation,omitempty"`
	Model        *string `json:"model"`
}

// SetModelResult is loom.setModel's reply: the model now in use.
type SetModelResult struct {
	Folder string `json:"folder"`
	Model  string `json:"model"`
}

func (h commandHandler) runModels(ctx context.Context, a ModelArgs) (any, error) {
	s := h.s
	if a.Model != "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes no model (use %s to switch)", CmdModels, CmdSetModel)
	}
	sess, err := s.session(CmdModels, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	list, err := sess.Controls().ModelCatalog().Models(ctx)
	if err != nil {
		return nil, err
	}
	out := &ModelsWire{Folder: sess.Folder().Path(), Current: list.Current, Configured: list.Configured, Error: list.Error, Models: make([]ModelEntry, len(list.Models))}
	for i, id := range list.Models {
		out.Models[i] = ModelEntry{ID: id}
	}
	return out, nil
}

func (h commandHandler) runSetModel(ctx context.Context, a SetModelArgs) (any, error) {
	s := h.s
	if a.Model == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, `%s: model is required (a model of %s, or "" for model.name)`, CmdSetModel, CmdModels)
	}
	sess, err := s.session(CmdSetModel, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(*a.Model)
	if model != "" {
		// A model the server does not list is refused, when the list is
		// known (a server that lists none, or failed to, is taken at
		// its word).
		if list, err := sess.Controls().ModelCatalog().Models(ctx); err == nil && list.Error == "" && len(list.Models) > 0 &&
			!slices.Contains(list.Models, model) && model != list.Configured {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: the model server does not list %q; its models: %s",
				CmdSetModel, model, strings.Join(list.Models, ", "))
		}
	}
	now, err := sess.Controls().SetModel(ctx, model)
	if errors.Is(err, workspace.ErrBadModel) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdSetModel, err)
	}
	if err != nil {
		return nil, err
	}
	return &SetModelResult{Folder: sess.Folder().Path(), Model: now}, nil
}
