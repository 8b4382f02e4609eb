package workspace

import (
	"context"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// contextWindow returns the model's context window in tokens and where it
// comes from: model.context_window, else the known window of the model's
// name, else llm.DefaultContextWindow.
func contextWindow(cfg config.Config) (int, string) {
	if cfg.Model.ContextWindow > 0 {
		return cfg.Model.ContextWindow, "model.context_window"
	}
	if n, ok := llm.KnownContextWindow(cfg.Model.Name); ok {
		return n, "known window of " + cfg.Model.Name
	}
	return llm.DefaultContextWindow, "default (set model.context_window)"
}

// Compact compacts the conversation now (fsm.Compact): the model
// summarises it, and the summary replaces all but the last exchange.
func (s *Session) Compact(ctx context.Context) error {
	var err error
	callErr := s.call(ctx, func() {
		switch {
		case s.cfgErr != nil:
			err = s.cfgErr
		case s.modelErr != nil:
			err = s.modelErr
		default:
			_, err = s.step(fsm.Compact{})
		}
	})
	if callErr != nil {
		return callErr
	}
	return err
}
