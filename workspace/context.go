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
	// "" when none was. cacheKey is its key in the discovery cache.
	key      string
	cacheKey string
	// refresh is set when the window came from the discovery cache and
	// is to be asked again after a first response.
	refresh bool
	// asking is true while the question is in flight.
	asking bool
	// window is the answer; zero when there is none.
	window llm.Window
	// answered is closed once the first answer (or its absence) is
	// applied: at once when remembered.
	answered chan struct{}
	// runningAsked is set when the server was asked for the window it
	// runs the model with (after a first response loaded the model).
	runningAsked bool
	// warnedConfigured marks the warning that model.context_window is
	// larger than the running window, said once.
	warnedConfigured bool
}

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

// probeWindow learns the model's context window from its server, when
// model.context_window is unset and the provider can ask: from the
// discovery cache at once when the server told it before (then asked
// again in the background once a first response came, see
// refreshWindow), else by asking now, concurrently with whatever the
// conversations send. The answer reaches the conversations' state
// machines as a configuration change, journaled like a reload of
// loom.toml. It runs on the folder's goroutine, within loadConfig.
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
	f.window = serverWindow{key: key, cacheKey: discoveryKey(cfg.Model.BaseURL, cfg.Model.Name), answered: make(chan struct{})}
	f.next.serverWindow = llm.Window{}
	remembered, ok := f.host.discovered(f.window.cacheKey)
	if pm, isPM := prober.(llm.ProbeMemory); isPM && ok {
		pm.SkipProbes(remembered.Missing)
	}
	if ok && remembered.Window.Tokens > 0 {
		w := remembered.Window
		w.Source += " (remembered)"
		f.window.window, f.next.serverWindow, f.next.windowAsking = w, w, false
		f.window.refresh = true
		close(f.window.answered)
		return
	}
	f.askWindow(prober)
}

// askWindow asks the server for the model's window on a worker, and
// applies and remembers the answer.
func (f *Folder) askWindow(prober llm.WindowProber) {
	key, cacheKey := f.window.key, f.window.cacheKey
	f.window.asking = true
	f.next.windowAsking = f.next.serverWindow.Tokens == 0
	answered, life := f.window.answered, f.life
	f.goWorker(func() {
		ctx, cancel := context.WithTimeout(life, windowProbeTimeout)
		w, err := prober.ContextWindow(ctx)
		cancel()
		var missing []string
		if pm, ok := prober.(llm.ProbeMemory); ok {
			missing = pm.MissingProbes()
		}
		if err == nil || ctx.Err() == nil {
			f.host.remember(cacheKey, func(e *discoveryEntry) { e.Window, e.Missing = w, missing })
		}
		f.post(func() {
			if answered != nil {
				defer close(answered)
			}
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

// refreshWindow asks the server again for a window the discovery cache
// gave, once, after a first model response (so that the question never
// competes with the first request). A conversation calls it after a
// response completed; it returns at once.
func (f *Folder) refreshWindow() {
	f.post(func() {
		if !f.window.refresh || f.window.asking {
			return
		}
		f.window.refresh = false
		if prober, ok := f.next.provider.(llm.WindowProber); ok {
			f.window.answered = nil
			f.askWindow(prober)
		}
	})
}

// forgetWindow drops the remembered window of the folder's server and
// model after a context-length error or a cut prompt: the next start
// asks the server again, and so does this one now.
func (f *Folder) forgetWindow() {
	f.post(func() {
		if f.window.cacheKey == "" {
			return
		}
		f.host.remember(f.window.cacheKey, func(e *discoveryEntry) { e.Window = llm.Window{} })
		if prober, ok := f.next.provider.(llm.WindowProber); ok && !f.window.asking {
			f.window.refresh = false
			f.window.answered = nil
			f.askWindow(prober)
		}
	})
}

// learnRunningWindowNow asks the server, once per server and model, for
// the window it runs the model with (Ollama's num_ctx, known once a
// response loaded the model), and publishes it before it returns: the
// conversations budget with the smaller of it and the trained window. A
// conversation's stream calls it when a response completed, before that
// completion is stepped, so that no request and no status of the turn
// uses the window the server does not run. It waits at most
// windowProbeTimeout.
func (f *Folder) learnRunningWindowNow(ctx context.Context, prober llm.RunningWindowProber) {
	var ask bool
	var key string
	var life context.Context
	if f.call(ctx, func() {
		ask, key, life = !f.window.runningAsked, f.window.key, f.life
		f.window.runningAsked = true
	}) != nil || !ask {
		return
	}
	pctx, cancel := context.WithTimeout(life, windowProbeTimeout)
	w, err := prober.RunningWindow(pctx)
	cancel()
	if err != nil {
		f.log.Debug("no running window", "err", err)
		return
	}
	f.call(ctx, func() {
		if f.window.key != key {
			return // the configuration changed meanwhile
		}
		f.next.runningWindow = w
		f.log.Info("the model's running context window", "tokens", w.Tokens, "source", w.Source)
		if c := f.next.cfg.Model.ContextWindow; c > w.Tokens && !f.window.warnedConfigured {
			f.window.warnedConfigured = true
			f.notify(Notification{Kind: NoteInfo, Text: fmt.Sprintf(
				"model.context_window is %d but the server runs %s with %d tokens (%s): loom keeps to %d; to get %d, start Ollama with OLLAMA_CONTEXT_LENGTH=%d (see \"Configure a model\" in the README)",
				c, f.next.cfg.Model.Name, w.Tokens, w.Source, w.Tokens, c, c)})
		}
		f.publish()
	})
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
