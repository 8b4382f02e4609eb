package workspace

import (
	"context"
	"fmt"
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
	// running is the window the server runs the model with now (Ollama's
	// num_ctx), asked once after the first response loaded the model;
	// runningAsked is set when that question was sent.
	running      llm.Window
	runningAsked bool
	// warnedConfigured marks the warning that model.context_window is
	// larger than the running window, said once.
	warnedConfigured bool
}

// contextWindow returns the model's context window in tokens and where it
// comes from: model.context_window, else what the server said, else the
// known window of the model's name, else llm.DefaultContextWindow.
func (s *Session) contextWindow() (int, string) {
	cfg := s.cfg
	run := s.window.running
	if cfg.Model.ContextWindow > 0 {
		if run.Tokens > 0 && run.Tokens < cfg.Model.ContextWindow {
			return run.Tokens, run.Source + ", below model.context_window"
		}
		return cfg.Model.ContextWindow, "model.context_window"
	}
	if run.Tokens > 0 && (s.window.window.Tokens <= 0 || run.Tokens < s.window.window.Tokens) {
		return run.Tokens, run.Source
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

// askRunningWindow tells whether the request being sent should be
// followed, once it succeeded, by the question of the model's running
// window; it marks the question as asked.
func (s *Session) askRunningWindow() (llm.RunningWindowProber, bool) {
	prober, ok := s.provider.(llm.RunningWindowProber)
	if !ok || s.window.runningAsked {
		return nil, false
	}
	s.window.runningAsked = true
	return prober, true
}

// learnRunningWindow asks the server for the window the model runs with,
// after a response loaded it, and applies the answer: the smaller of it
// and the trained window is the one the conversation is budgeted with.
// Called on a worker goroutine.
func (s *Session) learnRunningWindow(ctx context.Context, prober llm.RunningWindowProber) {
	ctx, cancel := context.WithTimeout(ctx, windowProbeTimeout)
	w, err := prober.RunningWindow(ctx)
	cancel()
	if err != nil {
		s.log.Debug("no running window", "err", err)
		return
	}
	s.post(func() {
		s.window.running = w
		s.log.Info("the model's running context window", "tokens", w.Tokens, "source", w.Source)
		if c := s.cfg.Model.ContextWindow; c > w.Tokens && !s.window.warnedConfigured {
			s.window.warnedConfigured = true
			s.notify(Notification{Kind: NoteInfo, Text: fmt.Sprintf(
				"model.context_window is %d but the server runs %s with %d tokens (%s): loom keeps to %d; to get %d, start Ollama with OLLAMA_CONTEXT_LENGTH=%d (see \"Configure a model\" in the README)",
				c, s.cfg.Model.Name, w.Tokens, w.Source, w.Tokens, c, c)})
		}
		if s.m != nil {
			s.m.Reconfigure(s.machineConfig())
			s.journalConfig()
		}
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
