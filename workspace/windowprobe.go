package workspace

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/loom-lsp/loom-lsp/llm"
)

// windowProbe asks the model's server for the model's context window,
// for a folder: once per server and model (probe, at each configuration
// load), again after a first response when the answer came from the
// discovery cache (refresh) or after a context-length error (forget),
// and for the window the server runs the model with (learnRunningNow).
// The answers go into the settings the folder is building (next) and
// are published to the conversations. It lives on the folder's
// goroutine, and reaches the folder only through the functions below.
type windowProbe struct {
	// server is what the server said.
	server serverWindow
	// next is the folder's settings being built; host remembers the
	// answers (discovery.go); life ends with the folder.
	next *settings
	host *Host
	log  *slog.Logger
	life context.Context
	// post and call run a function on the folder's goroutine (call
	// waits), goWorker on a worker of the folder; publish hands next to
	// the conversations; notify tells the user.
	post     func(fn func())
	call     func(ctx context.Context, fn func()) error
	goWorker func(fn func())
	publish  func()
	notify   func(n Notification)
}

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

// probe learns the model's context window from its server, when
// model.context_window is unset and the provider can ask: from the
// discovery cache at once when the server told it before (then asked
// again in the background once a first response came, see
// refresh), else by asking now, concurrently with whatever the
// conversations send. The answer reaches the conversations' state
// machines as a configuration change, journaled like a reload of
// loom.toml. It runs on the folder's goroutine, within loadConfig.
func (p *windowProbe) probe() {
	cfg := p.next.cfg
	prober, ok := p.next.provider.(llm.WindowProber)
	if cfg.Model.ContextWindow > 0 || !ok {
		return
	}
	key := cfg.Model.BaseURL + "\x00" + cfg.Model.Name
	if p.server.key == key {
		return // asked already
	}
	p.server = serverWindow{key: key, cacheKey: discoveryKey(cfg.Model.BaseURL, cfg.Model.Name), answered: make(chan struct{})}
	p.next.serverWindow = llm.Window{}
	remembered, ok := p.host.discovered(p.server.cacheKey)
	if pm, isPM := prober.(llm.ProbeMemory); isPM && ok {
		pm.SkipProbes(remembered.Missing)
	}
	if ok && remembered.Window.Tokens > 0 {
		w := remembered.Window
		w.Source += " (remembered)"
		p.server.window, p.next.serverWindow, p.next.windowAsking = w, w, false
		p.server.refresh = true
		close(p.server.answered)
		return
	}
	p.ask(prober)
}

// ask asks the server for the model's window on a worker, and
// applies and remembers the answer.
func (p *windowProbe) ask(prober llm.WindowProber) {
	key, cacheKey := p.server.key, p.server.cacheKey
	p.server.asking = true
	p.next.windowAsking = p.next.serverWindow.Tokens == 0
	answered, life := p.server.answered, p.life
	p.goWorker(func() {
		ctx, cancel := context.WithTimeout(life, windowProbeTimeout)
		w, err := prober.ContextWindow(ctx)
		cancel()
		var missing []string
		if pm, ok := prober.(llm.ProbeMemory); ok {
			missing = pm.MissingProbes()
		}
		if err == nil || ctx.Err() == nil {
			p.host.remember(cacheKey, func(e *discoveryEntry) { e.Window, e.Missing = w, missing })
		}
		p.post(func() {
			if answered != nil {
				defer close(answered)
			}
			if p.server.key != key {
				return // the configuration changed meanwhile
			}
			p.server.asking = false
			p.next.windowAsking = false
			defer p.publish()
			if err != nil {
				p.log.Info("the model's context window is not known from the server", "err", err)
				return
			}
			p.server.window = w
			p.next.serverWindow = w
			p.log.Info("the model's context window", "tokens", w.Tokens, "source", w.Source)
		})
	})
}

// refresh asks the server again for a window the discovery cache
// gave, once, after a first model response (so that the question never
// competes with the first request). A conversation calls it after a
// response completed; it returns at once.
func (p *windowProbe) refresh() {
	p.post(func() {
		if !p.server.refresh || p.server.asking {
			return
		}
		p.server.refresh = false
		if prober, ok := p.next.provider.(llm.WindowProber); ok {
			p.server.answered = nil
			p.ask(prober)
		}
	})
}

// forget drops the remembered window of the folder's server and
// model after a context-length error or a cut prompt: the next start
// asks the server again, and so does this one now.
func (p *windowProbe) forget() {
	p.post(func() {
		if p.server.cacheKey == "" {
			return
		}
		p.host.remember(p.server.cacheKey, func(e *discoveryEntry) { e.Window = llm.Window{} })
		if prober, ok := p.next.provider.(llm.WindowProber); ok && !p.server.asking {
			p.server.refresh = false
			p.server.answered = nil
			p.ask(prober)
		}
	})
}

// learnRunningNow asks the server, once per server and model, for
// the window it runs the model with (Ollama's num_ctx, known once a
// response loaded the model), and publishes it before it returns: the
// conversations budget with the smaller of it and the trained window. A
// conversation's stream calls it when a response completed, before that
// completion is stepped, so that no request and no status of the turn
// uses the window the server does not run. It waits at most
// windowProbeTimeout.
func (p *windowProbe) learnRunningNow(ctx context.Context, prober llm.RunningWindowProber) {
	var ask bool
	var key string
	var life context.Context
	if p.call(ctx, func() {
		ask, key, life = !p.server.runningAsked, p.server.key, p.life
		p.server.runningAsked = true
	}) != nil || !ask {
		return
	}
	pctx, cancel := context.WithTimeout(life, windowProbeTimeout)
	w, err := prober.RunningWindow(pctx)
	cancel()
	if err != nil {
		p.log.Debug("no running window", "err", err)
		return
	}
	p.call(ctx, func() {
		if p.server.key != key {
			return // the configuration changed meanwhile
		}
		p.next.runningWindow = w
		p.log.Info("the model's running context window", "tokens", w.Tokens, "source", w.Source)
		if c := p.next.cfg.Model.ContextWindow; c > w.Tokens && !p.server.warnedConfigured {
			p.server.warnedConfigured = true
			p.notify(Notification{Kind: NoteInfo, Text: fmt.Sprintf(
				"model.context_window is %d but the server runs %s with %d tokens (%s): loom keeps to %d; to get %d, start Ollama with OLLAMA_CONTEXT_LENGTH=%d (see \"Configure a model\" in the README)",
				c, p.next.cfg.Model.Name, w.Tokens, w.Source, w.Tokens, c, c)})
		}
		p.publish()
	})
}
