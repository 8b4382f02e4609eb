package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/tools"
)

// loadConfig (re)loads the folder's configuration on the folder's
// goroutine and publishes the settings it gives. On a reload, a broken
// configuration keeps the current one and is reported.
func (f *Folder) loadConfig(reload bool) {
	cfg, err := f.host.loadConfig(f.dir)
	if reload && err == nil && f.next.cfgErr == nil && !f.reloadFailed && reflect.DeepEqual(cfg, f.next.cfg) {
		// Nothing changed (a client answering the settings pull with what
		// it had, a save that kept the file's text): no reload, no notice,
		// and a turn in flight keeps its tools as they are. The agent
		// hooks are read again (a hook file changed, loom.trust).
		stop := f.next.agent.stopHooks
		f.loadHooks(cfg, f.next.env)
		if f.next.agent.stopHooks != stop {
			f.publish()
		}
		return
	}
	defer f.publish()
	if err != nil {
		f.log.Warn("configuration error", "err", err)
		if reload && f.next.cfgErr == nil {
			f.reloadFailed = true // the fixed file is news, even if it is the same
			f.notify(Notification{Kind: NoteError, Text: "loom.toml: " + err.Error() + " (keeping the previous configuration)"})
			return
		}
		f.next.cfgErr = err
		f.notify(Notification{Kind: NoteError, Text: "loom.toml: " + err.Error()})
		return
	}
	f.reloadFailed = false
	st := &f.next
	prevModel, prevProvider := st.cfg.Model, st.provider
	st.cfgErr = nil
	st.cfg = cfg
	if f.instrPaths == nil {
		f.instrPaths = instructionPaths(f.dir)
	}
	st.instr = readInstructions(f.instrPaths)
	st.agent = f.readAgentFiles(cfg)
	agents := st.agent.agents
	f.agents.Store(&agents)
	skills := st.agent.skills
	f.skills.Store(&skills)
	if st.agent.notice != "" && st.agent.notice != f.agentNotice {
		f.notify(Notification{Kind: NoteInfo, Text: st.agent.notice, Visible: true})
	}
	f.agentNotice = st.agent.notice
	// The key leaves the process environment before any tool runs, and its
	// value is masked from now on.
	secret.Take(cfg.Model.APIKeyEnv)
	f.host.redactor.Add(f.host.opts.Getenv(cfg.Model.APIKeyEnv))
	if env := cfg.Completion.APIKeyEnv; env != "" {
		// The completion model's key, likewise.
		secret.Take(env)
		f.host.redactor.Add(f.host.opts.Getenv(env))
	}
	for _, v := range cfg.Model.SecretHeaderValues() {
		f.host.redactor.Add(v) // a key kept in model.headers
	}
	how := ""
	if f.host.opts.TrustHow != nil {
		how = f.host.opts.TrustHow()
	}
	if notice := cfg.TrustNotice(how); notice != st.trustNotice {
		// Once per change, not on every reload.
		st.trustNotice = notice
		if notice != "" {
			f.log.Warn("untrusted workspace settings ignored", "keys", cfg.IgnoredKeys())
			f.notify(Notification{Kind: NoteError, Text: notice, Trust: true})
		}
	}
	key := keyHash(f.host.opts.Getenv(cfg.Model.APIKeyEnv))
	if prevProvider != nil && reflect.DeepEqual(prevModel, cfg.Model) && key == f.providerKey {
		// The model is as it was: keep its provider, and with it what it
		// learned of the server (dialect, request cache; a scripted
		// model's place in its script). A new one mid-turn would answer
		// the turn's next request as a stranger to it.
	} else {
		st.provider, st.modelErr = f.host.opts.Provider(cfg, f.host.opts.Getenv)
		f.providerKey = key
		if st.modelErr != nil {
			st.provider = nil
			f.log.Info("no usable model", "err", st.modelErr)
		}
	}
	f.probeWindow()
	f.sandbox = f.sandboxFor(cfg)
	st.langServers = f.lang.poolFor(cfg, f.sandbox, f.dir, f.log)
	f.applyMCP(cfg)
	f.rebuildTools()
	st.env = tools.Env{
		Root:           f.dir,
		Files:          f.host.overlay,
		BashTimeout:    cfg.Tools.BashTimeout.Duration,
		BashMaxTimeout: cfg.Tools.BashMaxTimeout.Duration,
		ScrubEnv:       scrubEnv(cfg),
		MaxOutputBytes: cfg.Tools.MaxOutputBytes,
		Sandbox:        f.sandbox,
	}
	f.loadHooks(cfg, st.env)
	if reload {
		// Said once the conversations have the new settings (publish
		// hands them over first): a client that reads the notice and
		// asks loom.status sees them.
		f.afterPublish = append(f.afterPublish, Notification{Kind: NoteInfo, Text: "configuration reloaded"})
	}
}

// useSettings makes st the settings the conversation runs with, on its
// goroutine: the machine is reconfigured, and that is journaled.
func (s *Conversation) useSettings(st settings) {
	s.children.narrow(&st)
	st.env.Reads = s.reads
	st.env.ReadRoots = s.readRoots
	s.settings = st
	if s.m != nil {
		s.m.Reconfigure(s.machineConfig())
		s.jr.config(s.machineConfig())
	}
}

// machineConfig derives the state machine's configuration.
func (s *Conversation) machineConfig() fsm.Config {
	c := fsm.Config{
		SystemPrompt:  baseInstructions(s.cfg, s.folder.dir, s.clientPrompt) + s.instr.text + s.skillListing() + readRootsNote(s.readRoots),
		Tools:         s.toolSpecs(),
		MaxRetries:    s.cfg.Agent.MaxRetries,
		MaxIterations: s.cfg.Agent.MaxIterations,
		RetryBase:     s.cfg.Agent.RetryBase.Duration,
		RetryMax:      s.cfg.Agent.RetryMax.Duration,
		CompactAt:     s.cfg.Agent.CompactAt,
		KeepToolTurns: s.cfg.Agent.ElideAfterTurns,
		ReviewEdits:   s.cfg.Tools.Edits == config.EditsReview,
		StopHooks:     s.agent.stopHooks,
	}
	if c.KeepToolTurns == 0 {
		c.KeepToolTurns = -1 // config's 0 never elides; fsm's 0 means default
	}
	c.ContextWindow, _ = s.contextWindow()
	if c.MaxRetries == 0 {
		c.MaxRetries = -1 // config's 0 means no retry; fsm's 0 means default
	}
	c.Subagents = spawnCaps(s.cfg.Subagents)
	s.children.configure(&c)
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

// keyHash names an API key's value without keeping it.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// scrubEnv names the variables holding the configured API keys, kept
// from the tools' processes.
func scrubEnv(cfg config.Config) []string {
	if env := cfg.Completion.APIKeyEnv; env != "" && env != cfg.Model.APIKeyEnv {
		return []string{cfg.Model.APIKeyEnv, env}
	}
	return []string{cfg.Model.APIKeyEnv}
}
