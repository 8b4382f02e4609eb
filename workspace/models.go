package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
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

// modelName is the model a conversation uses: its machine's choice,
// else cfg's. On the conversation's goroutine.
func modelName(m *fsm.Machine, cfg config.Config) string {
	if name := m.Model(); name != "" {
		return name
	}
	return cfg.Model.Name
}

// ModelCatalog is what a conversation's model server offers (GET
// /v1/models, or Ollama's /api/tags): asked through the provider's lister
// and remembered per server by the host (discovery.go), so that a list
// shows at once and is asked again in the background. Any goroutine.
type ModelCatalog struct {
	folder *Folder
	// now reads the conversation's model, model.name, provider and model
	// server (on the conversation's goroutine).
	now func(ctx context.Context) (list ModelList, provider llm.Provider, baseURL string, err error)
}

// ModelCatalog is the catalogue of the conversation's model server.
func (c Controls) ModelCatalog() ModelCatalog {
	return ModelCatalog{folder: c.folder, now: func(ctx context.Context) (list ModelList, provider llm.Provider, baseURL string, err error) {
		err = c.do(ctx, func() {
			cfg := c.cfg()
			list.Current, list.Configured, provider, baseURL = modelName(c.m(), cfg), cfg.Model.Name, c.provider(), cfg.Model.BaseURL
		})
		return list, provider, baseURL, err
	}}
}

// Models returns the models the model server offers: the list remembered
// from an earlier answer at once (asked again in the background), else
// the server's answer. A server that cannot say gives a list of the
// current model alone, with Error set.
func (c ModelCatalog) Models(ctx context.Context) (ModelList, error) {
	list, lister, cacheKey, err := c.lister(ctx)
	if err != nil || lister == nil {
		return list, err
	}
	if remembered, ok := c.folder.host.discovered(cacheKey); ok && remembered.Models != nil {
		c.folder.loop.goWorker(func() {
			ctx, cancel := context.WithTimeout(c.folder.life, listModelsTimeout)
			defer cancel()
			c.ask(ctx, list, lister, cacheKey)
		})
		return withCurrent(list, remembered.Models), nil
	}
	return c.ask(ctx, list, lister, cacheKey), nil
}

// Ask asks the model server for its models now, like Models without the
// remembered list.
func (c ModelCatalog) Ask(ctx context.Context) (ModelList, error) {
	list, lister, cacheKey, err := c.lister(ctx)
	if err != nil || lister == nil {
		return list, err
	}
	return c.ask(ctx, list, lister, cacheKey), nil
}

// Known returns at once what is known of the server's models without
// asking it: the list remembered from an earlier answer, else the current
// model alone (with Error saying the server was not asked).
func (c ModelCatalog) Known(ctx context.Context) (ModelList, error) {
	list, lister, cacheKey, err := c.lister(ctx)
	if err != nil || lister == nil {
		return list, err
	}
	if remembered, ok := c.folder.host.discovered(cacheKey); ok && remembered.Models != nil {
		return withCurrent(list, remembered.Models), nil
	}
	list.Error = "the model server was not asked yet"
	return withCurrent(list, nil), nil
}

// lister reads the conversation's model and the provider's lister. A
// provider that cannot list gives the list of the current model alone
// (with Error), and a nil lister.
func (c ModelCatalog) lister(ctx context.Context) (ModelList, llm.ModelLister, string, error) {
	list, provider, baseURL, err := c.now(ctx)
	if err != nil {
		return ModelList{}, nil, "", err
	}
	lister, ok := provider.(llm.ModelLister)
	switch {
	case provider == nil:
		list.Error = "no model is configured"
	case !ok:
		list.Error = "this model provider cannot list models"
	default:
		return list, lister, discoveryKey(baseURL, ""), nil
	}
	return withCurrent(list, nil), nil, "", nil
}

// ask asks lister and remembers a list it gave.
func (c ModelCatalog) ask(ctx context.Context, list ModelList, lister llm.ModelLister, cacheKey string) ModelList {
	lctx, cancel := context.WithTimeout(ctx, listModelsTimeout)
	ids, err := lister.ListModels(lctx)
	cancel()
	if err != nil {
		list.Error = c.folder.host.redactor.String(err.Error())
	} else {
		c.folder.host.remember(cacheKey, func(e *discoveryEntry) { e.Models = ids })
	}
	return withCurrent(list, ids)
}

// withCurrent sets the list's models to ids, the current model among them.
func withCurrent(list ModelList, ids []string) ModelList {
	list.Models = slices.Clone(ids)
	if list.Current != "" && !slices.Contains(list.Models, list.Current) {
		list.Models = append([]string{list.Current}, list.Models...)
	}
	if list.Models == nil {
		list.Models = []string{}
	}
	return list
}

// ErrBadModel is wrapped by SetModel's error for a name no model can have.
var ErrBadModel = errors.New("bad model name")

// SetModel switches the conversation to model for its next requests
// ("" = back to model.name), as an event of the machine, journaled, so
// that a resumed conversation keeps it. The name is not checked against
// the server's list (a server may serve models it does not list); a
// request to a model the server does not have fails with its error.
func (c Controls) SetModel(ctx context.Context, model string) (string, error) {
	model = strings.TrimSpace(model)
	if len(model) > 256 || strings.ContainsAny(model, "\n\r\x00") {
		return "", fmt.Errorf("%w: %q", ErrBadModel, model)
	}
	var now string
	var stepErr error
	err := c.do(ctx, func() {
		if model == c.cfg().Model.Name {
			model = ""
		}
		stepErr = c.step(fsm.SelectModel{Model: model})
		now = modelName(c.m(), c.cfg())
	})
	if err == nil {
		err = stepErr
	}
	return now, err
}

// ErrBadEffort is wrapped by SetEffort's error for an effort no API
// takes.
var ErrBadEffort = errors.New("unknown reasoning effort")

// SetEffort sets the conversation's reasoning effort for its next
// requests, overriding [model] reasoning_effort ("" = back to it), as an
// event of the machine, journaled, so that a resumed conversation keeps
// it; a reset forgets it. It returns the effort in force now ("" when
// neither the conversation nor the configuration sets one).
func (c Controls) SetEffort(ctx context.Context, effort string) (string, error) {
	effort = strings.ToLower(strings.TrimSpace(effort))
	if effort != "" && !slices.Contains(config.ReasoningEfforts, effort) {
		return "", fmt.Errorf("%w %q: use one of %s, or \"\" for [model] reasoning_effort", ErrBadEffort, effort, strings.Join(config.ReasoningEfforts, ", "))
	}
	var now string
	var stepErr error
	err := c.do(ctx, func() {
		stepErr = c.step(fsm.SelectEffort{Effort: effort})
		now = effortOf(c.m(), c.cfg())
	})
	if err == nil {
		err = stepErr
	}
	return now, err
}

// effortOf is the reasoning effort the next request is sent with: the
// conversation's (its machine's), else cfg's. On the conversation's
// goroutine.
func effortOf(m *fsm.Machine, cfg config.Config) string {
	if e := m.Effort(); e != "" {
		return e
	}
	return cfg.Model.ReasoningEffort
}

// effortWords says a change of the conversation's reasoning effort.
func effortWords(chosen, configured string) string {
	switch {
	case chosen != "":
		return "This conversation now asks the model with reasoning effort " + chosen + "."
	case configured != "":
		return "This conversation now asks the model with the configured reasoning effort (" + configured + ")."
	}
	return "This conversation now asks the model with the server's default reasoning effort."
}

// Effort returns the reasoning effort the next request is sent with
// ("" when neither the conversation nor the configuration sets one), and
// whether the conversation chose it (SetEffort).
func (c Controls) Effort(ctx context.Context) (effort string, chosen bool, err error) {
	err = c.do(ctx, func() { effort, chosen = effortOf(c.m(), c.cfg()), c.m().Effort() != "" })
	return effort, chosen, err
}
