package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// listModelsTimeout bounds the wait for the model server's list.
const listModelsTimeout = 10 * time.Second

// ModelList is what Models reports: the conversation's model and those
// the server offers.
type ModelList struct {
	// Current is the model the conversation uses.
	Current string `json:"current"`
	// Configured is model.name, the model a new conversation uses.
	Configured string `json:"configured"`
	// Models are the server's models, sorted; Current is among them.
	Models []string `json:"models"`
	// Error says why the server's list is missing, "" when it is not.
	Error string `json:"error,omitempty"`
}

// modelName is the model the conversation uses. It runs on the owner
// goroutine.
func (s *Conversation) modelName() string {
	if m := s.m.Model(); m != "" {
		return m
	}
	return s.cfg.Model.Name
}

// Models asks the model server which models it offers (GET /v1/models,
// or Ollama's /api/tags). A server that cannot say gives a list of the
// current model alone, with Error set.
func (s *Conversation) Models(ctx context.Context) (ModelList, error) {
	var list ModelList
	var provider llm.Provider
	if err := s.call(ctx, func() {
		list.Current, list.Configured, provider = s.modelName(), s.cfg.Model.Name, s.provider
	}); err != nil {
		return ModelList{}, err
	}
	lister, ok := provider.(llm.ModelLister)
	switch {
	case provider == nil:
		list.Error = "no model is configured"
	case !ok:
		list.Error = "this model provider cannot list models"
	default:
		lctx, cancel := context.WithTimeout(ctx, listModelsTimeout)
		ids, err := lister.ListModels(lctx)
		cancel()
		if err != nil {
			list.Error = s.folder.host.redactor.String(err.Error())
		}
		list.Models = ids
	}
	if list.Current != "" && !slices.Contains(list.Models, list.Current) {
		list.Models = append([]string{list.Current}, list.Models...)
	}
	if list.Models == nil {
		list.Models = []string{}
	}
	return list, nil
}

// ErrBadModel is wrapped by SetModel's error for a name no model can have.
var ErrBadModel = errors.New("bad model name")

// SetModel switches the conversation to model for its next requests
// ("" = back to model.name), as an event of the machine, journaled, so
// that a resumed conversation keeps it. The name is not checked against
// the server's list (a server may serve models it does not list); a
// request to a model the server does not have fails with its error.
func (s *Conversation) SetModel(ctx context.Context, model string) (string, error) {
	model = strings.TrimSpace(model)
	if len(model) > 256 || strings.ContainsAny(model, "\n\r\x00") {
		return "", fmt.Errorf("%w: %q", ErrBadModel, model)
	}
	var now string
	var stepErr error
	err := s.call(ctx, func() {
		if model == s.cfg.Model.Name {
			model = ""
		}
		_, stepErr = s.step(fsm.SelectModel{Model: model})
		now = s.modelName()
	})
	if err == nil {
		err = stepErr
	}
	return now, err
}
