package workspace

import (
	"context"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// windowProbeTimeout bounds the one question to the server about the
// model's context window. The session never waits for the answer: until
// it comes, the fallback window is used.
const windowProbeTimeout = 5 * time.Second

// contextWindow returns the model's context window in tokens and where it
// comes from: model.context_window, else what the server said, else the
// known window of the model's name, else llm.DefaultContextWindow.
func (s *settings) contextWindow() (int, string) {
	cfg := s.cfg
	run := s.runningWindow
	if cfg.Model.ContextWindow > 0 {
		if run.Tokens > 0 && run.Tokens < cfg.Model.ContextWindow {
			return run.Tokens, run.Source + ", below model.context_window"
		}
		return cfg.Model.ContextWindow, "model.context_window"
	}
	if run.Tokens > 0 && (s.serverWindow.Tokens <= 0 || run.Tokens < s.serverWindow.Tokens) {
		return run.Tokens, run.Source
	}
	if s.serverWindow.Tokens > 0 {
		return s.serverWindow.Tokens, s.serverWindow.Source
	}
	asking := ""
	if s.windowAsking {
		asking = " (asking the server)"
	}
	if n, ok := llm.KnownContextWindow(cfg.Model.Name); ok {
		return n, "known window of " + cfg.Model.Name + asking
	}
	return llm.DefaultContextWindow, "default (set model.context_window)" + asking
}

// Compact compacts the conversation now (fsm.Compact): the model
// summarises it, and the summary replaces all but the last exchange.
func (s *Conversation) Compact(ctx context.Context) error {
	var err error
	callErr := s.loop.call(ctx, func() {
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
