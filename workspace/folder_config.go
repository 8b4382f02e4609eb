package workspace

import (
	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/tools"
)

// loadConfig (re)loads the folder's configuration on the owner goroutine.
// On a reload, a broken configuration keeps the current one and is
// reported.
func (s *Conversation) loadConfig(reload bool) {
	cfg, err := s.host.loadConfig(s.folder)
	if err != nil {
		s.log.Warn("configuration error", "err", err)
		if reload && s.cfgErr == nil {
			s.notify(Notification{Kind: NoteError, Text: "loom.toml: " + err.Error() + " (keeping the previous configuration)"})
			return
		}
		s.cfgErr = err
		s.notify(Notification{Kind: NoteError, Text: "loom.toml: " + err.Error()})
		return
	}
	s.cfgErr = nil
	s.cfg = cfg
	if s.instrPaths == nil {
		s.instrPaths = instructionPaths(s.folder)
	}
	s.instr = readInstructions(s.instrPaths)
	// The key leaves the process environment before any tool runs, and its
	// value is masked from now on.
	secret.Take(cfg.Model.APIKeyEnv)
	s.host.redactor.Add(s.host.opts.Getenv(cfg.Model.APIKeyEnv))
	if notice := cfg.TrustNotice(); notice != s.trustNotice {
		// Once per change, not on every reload.
		s.trustNotice = notice
		if notice != "" {
			s.log.Warn("untrusted workspace settings ignored", "keys", cfg.IgnoredKeys())
			s.notify(Notification{Kind: NoteError, Text: notice})
		}
	}
	s.provider, s.modelErr = s.host.opts.Provider(cfg, s.host.opts.Getenv)
	if s.modelErr != nil {
		s.provider = nil
		s.log.Info("no usable model", "err", s.modelErr)
	}
	s.probeWindow()
	s.sandbox = s.sandboxFor(cfg)
	s.applyMCP(cfg)
	s.rebuildTools()
	s.env = tools.Env{
		Root:           s.folder,
		Files:          s.host.overlay,
		Reads:          s.reads,
		BashTimeout:    cfg.Tools.BashTimeout.Duration,
		BashMaxTimeout: cfg.Tools.BashMaxTimeout.Duration,
		ScrubEnv:       []string{cfg.Model.APIKeyEnv},
		MaxOutputBytes: cfg.Tools.MaxOutputBytes,
		Sandbox:        s.sandbox,
	}
	if s.m != nil {
		s.m.Reconfigure(s.machineConfig())
		s.journalConfig()
	}
	if reload {
		s.notify(Notification{Kind: NoteInfo, Text: "configuration reloaded"})
	}
}

// machineConfig derives the state machine's configuration.
func (s *Conversation) machineConfig() fsm.Config {
	c := fsm.Config{
		SystemPrompt:  systemPrompt(s.cfg.Agent.SystemPrompt, s.folder) + s.instr.text,
		Tools:         s.registry.Specs(),
		MaxRetries:    s.cfg.Agent.MaxRetries,
		MaxIterations: s.cfg.Agent.MaxIterations,
		RetryBase:     s.cfg.Agent.RetryBase.Duration,
		RetryMax:      s.cfg.Agent.RetryMax.Duration,
		CompactAt:     s.cfg.Agent.CompactAt,
		KeepToolTurns: s.cfg.Agent.ElideAfterTurns,
		ReviewEdits:   s.cfg.Tools.Edits == config.EditsReview,
	}
	if c.KeepToolTurns == 0 {
		c.KeepToolTurns = -1 // config's 0 never elides; fsm's 0 means default
	}
	c.ContextWindow, _ = s.contextWindow()
	if c.MaxRetries == 0 {
		c.MaxRetries = -1 // config's 0 means no retry; fsm's 0 means default
	}
	return c
}

func toolSchemas(r *tools.Registry) []llm.ToolSchema {
	all := r.All()
	out := make([]llm.ToolSchema, len(all))
	for i, t := range all {
		out[i] = llm.ToolSchema{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()}
	}
	return out
}
