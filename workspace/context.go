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
func (s *settings) contextWindow() (int, string) {
	cfg := s.cfg
	if cfg.Model.ContextWindow > 0 {
		return cfg.Model.ContextWindow, "model.context_window"
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

// probeWindow asks the model's server once for its context window, when
// model.context_window is unset and the provider can ask. The answer
// reaches the conversations' state machines as a configuration change,
// journaled like a reload of loom.toml. It runs on the folder's goroutine,
// within loadConfig.
func (f *Folder) probeWindow() {
	cfg := f.next.cfg
	prober, ok := f.next.provider.(llm.WindowProber)
	if cfg.Model.ContextWindow > 0 || !ok {
		return
	}
	key := cfg.Model.BaseURL + "\x00" + cfg.Model.Name
	if f.window.key == key {
		return // asked already
	}
	f.window = serverWindow{key: key, asking: true, answered: make(chan struct{})}
	f.next.serverWindow, f.next.windowAsking = llm.Window{}, true
	answered, life := f.window.answered, f.life
	f.goWorker(func() {
		ctx, cancel := context.WithTimeout(life, windowProbeTimeout)
		w, err := prober.ContextWindow(ctx)
		cancel()
		f.post(func() {
			defer close(answered)
			if f.window.key != key {
				return // the configuration changed meanwhile
			}
			f.window.asking = false
			f.next.windowAsking = false
			defer f.publish()
			if err != nil {
				f.log.Info("the model's context window is not known from the server", "err", err)
				return
			}
			f.window.window = w
			f.next.serverWindow = w
			f.log.Info("the model's context window", "tokens", w.Tokens, "source", w.Source)
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
