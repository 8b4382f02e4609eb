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

// serverWindow is what the model's server said of its context window.
type serverWindow struct {
	// key names the server and model asked (base_url and model name);
	// "" when none was.
	key string
	// asking is true while the question is in flight.
	asking bool
	// window is the answer; zero when there is none.
	window llm.Window
	// answered is closed once the answer (or its absence) is applied.
	answered chan struct{}
}

// contextWindow returns the model's context window in tokens and where it
// comes from: model.context_window, else what the server said, else the
// known window of the model's name, else llm.DefaultContextWindow.
func (s *Session) contextWindow() (int, string) {
	cfg := s.cfg
	if cfg.Model.ContextWindow > 0 {
		return cfg.Model.ContextWindow, "model.context_window"
	}
	if s.window.window.Tokens > 0 {
		return s.window.window.Tokens, s.window.window.Source
	}
	asking := ""
	if s.window.asking {
		asking = " (asking the server)"
	}
	if n, ok := llm.KnownContextWindow(cfg.Model.Name); ok {
		return n, "known window of " + cfg.Model.Name + asking
	}
	return llm.DefaultContextWindow, "default (set model.context_window)" + asking
}

// probeWindow asks the model's server once for its context window, when
// model.context_window is unset and the provider can ask. The answer
// reaches the state machine as a configuration change, journaled like a
// reload of loom.toml.
func (s *Session) probeWindow() {
	cfg := s.cfg
	prober, ok := s.provider.(llm.WindowProber)
	if cfg.Model.ContextWindow > 0 || !ok {
		return
	}
	key := cfg.Model.BaseURL + "\x00" + cfg.Model.Name
	if s.window.key == key {
		return // asked already
	}
	s.window = serverWindow{key: key, asking: true, answered: make(chan struct{})}
	answered, life := s.window.answered, s.life
	s.goWorker(func() {
		ctx, cancel := context.WithTimeout(life, windowProbeTimeout)
		w, err := prober.ContextWindow(ctx)
		cancel()
		s.post(func() {
			defer close(answered)
			if s.window.key != key {
				return // the configuration changed meanwhile
			}
			s.window.asking = false
			if err != nil {
				s.log.Info("the model's context window is not known from the server", "err", err)
				return
			}
			s.window.window = w
			s.log.Info("the model's context window", "tokens", w.Tokens, "source", w.Source)
			if s.m != nil && s.cfg.Model.ContextWindow <= 0 {
				s.m.Reconfigure(s.machineConfig())
				s.journalConfig()
			}
		})
	})
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
