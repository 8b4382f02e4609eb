package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// ErrConfig is wrapped by Ask's error when the folder's configuration
// could not be loaded.
var ErrConfig = errors.New("configuration error")

// ErrClosed is returned by the methods of a Conversation that has shut down.
var ErrClosed = errors.New("the session is closed")

// Conversation is one conversation of a workspace folder: its state
// machine, its queue of prompts, its journal and its turn in flight. One
// goroutine (run) owns the machine and performs its actions; model
// streams, tool runs, timers and editor replies come back to it only
// through its inbox. The exported methods are safe for concurrent use:
// they hand work to that goroutine and wait for it.
//
// It embeds the Folder it belongs to, whose parts (overlay, watcher, git,
// MCP servers, configuration) its conversations share, and its settings,
// the configuration it runs with.
type Conversation struct {
	// own are files loom rewrites itself (undo): no news for the user.
	own ownChanges
	// writes are the texts the conversation's own writes put in files:
	// their watcher echo is no change (ownwrites.go).
	writes ownWrites
	// folder is the workspace folder the conversation belongs to: what
	// its conversations share (configuration, watcher, git, MCP servers).
	folder *Folder
	settings

	// loop is how work reaches the owner goroutine (ownerloop.go).
	loop ownerLoop

	// Everything below is owned by the run goroutine.
	m *fsm.Machine
	// always is what the user allowed for the conversation (any
	// goroutine).
	always alwaysAllowed
	// reads are the files the conversation's model read, for edit_file to
	// refuse one that changed since.
	reads *tools.ReadTracker
	// clientPrompt is the client's system prompt, nil when none
	// (SetClientPrompt).
	clientPrompt *ClientPrompt
	// readRoots are the folders outside the workspace the read tools
	// may read (SetReadRoots).
	readRoots []string
	stopping  bool

	// turn is what runs for the turn in flight (inflight.go).
	turn inFlight

	startedTurn uint64
	turnPrompt  string
	// session is what the next prompt's SessionStart hooks are told
	// (convhooks.go).
	session sessionStart
	// promptMu keeps prompts in order while their hooks run.
	promptMu sync.Mutex
	// git is the auto-commit's state: the batch's agent texts, the
	// conversation's commits (hook.go).
	git gitState
	// fresh decides which changed files are news to the model
	// (freshness.go).
	fresh freshness
	// cards holds what each finished call's card shows, until shown
	// (actionnotes.go).
	cards toolCards
	// review keeps the proposals made under tools.edits = "review"
	// (package changes; the glue: review.go).
	review *changes.Review
	// changes is the conversation's worktree: the change verbs, and the
	// conversation's auto-commits (package changes).
	changes *changes.Tree
	// verbs apply what the change verbs return (changeapply.go).
	verbs *ChangeVerbs
	// turnTimes is when each turn started.
	turnTimes map[uint64]time.Time
	// ident names the conversation (its journal's id), stable across
	// resumes (a reset starts a conversation with a new one), and its
	// journal's path (identity.go).
	ident identity
	// opening is where the conversation starts from (see run).
	opening opening
	// jr is the conversation's journal (convjournal.go).
	jr convJournal
	// hooks runs the agent hooks for the conversation (convhooks.go).
	hooks *convHooks
	// out is the way out to the editor: notifications and approvals
	// (out.go).
	out out
	// children are the conversation's subagents, and its link to its
	// parent when it is one (children.go).
	children children
	// elicits asks the user the questions of MCP servers (elicit.go).
	elicits elicitations
}

// Status is a snapshot of a session, for loom.status.
type Status struct {
	Folder      string   `json:"folder"`
	State       string   `json:"state"`
	Turn        uint64   `json:"turn"`
	Model       string   `json:"model"`
	Queued      []string `json:"queued"`
	LastCommit  string   `json:"lastCommit,omitempty"`
	ConfigError string   `json:"configError,omitempty"`
	Messages    int      `json:"messages"`
	// ContextWindow is the model's context window in tokens, and
	// ContextSource where that figure comes from.
	ContextWindow int    `json:"contextWindow"`
	ContextSource string `json:"contextSource"`
	// Tokens estimates what the next request sends.
	Tokens int64 `json:"tokens"`
	// Trusted says whether the folder is trusted, so that its .loom.toml
	// may choose the model server, allow commands and change hooks.
	Trusted bool `json:"trusted"`
	// TrustNotice names the settings of an untrusted folder's .loom.toml
	// that were ignored, and how to trust it; "" when none were.
	TrustNotice string `json:"trustNotice,omitempty"`
	// Bash is the policy of the bash tool in force (tools.bash).
	Bash config.Policy `json:"bash"`
	// Edits says whether the agent's changes apply at once ("auto") or
	// wait for the user's review ("review"): tools.edits in force.
	Edits config.EditMode `json:"edits"`
	// MCPServers lists the configured MCP servers with their state and
	// tool counts.
	MCPServers []mcp.ServerStatus `json:"mcpServers"`
	// ConversationID names the conversation: stable across restarts that
	// resume it, new after a reset.
	ConversationID string `json:"conversationId,omitempty"`
	// Usage is the token usage of the last turn and of the conversation.
	Usage UsageStatus `json:"usage"`
	// Instructions lists the project's AGENTS.md files in the system
	// prompt, repository root first.
	Instructions []InstructionFile `json:"instructions"`
	// Skills and Commands are the Agent Skills (listed to the model by
	// name and description) and custom commands in use;
	// AgentFileProblems the files of either kind ignored, with why.
	// API is the wire API the model is spoken to with ("chat",
	// "responses", "messages"; "" for a scripted model).
	API               string               `json:"api,omitempty"`
	Skills            []agentfiles.Skill   `json:"skills,omitempty"`
	Commands          []agentfiles.Command `json:"commands,omitempty"`
	AgentFileProblems string               `json:"agentFileProblems,omitempty"`
	// Hooks are the agent hooks loaded, each with whether it runs now
	// (agenthooks.go).
	Hooks []HookStatus `json:"hooks,omitempty"`
	// AllowCommands are the folder's approval rules: the commands that
	// run without asking under tools.bash = "ask".
	AllowCommands []cmdrules.Rule `json:"allowCommands"`
	// AllowMCPServers are the MCP servers whose tools the user allowed
	// for good in this folder (the folder's rules): their calls run
	// without asking under approve = "ask".
	AllowMCPServers []string `json:"allowMcpServers"`
	// ApprovalTimeout is how long an approval waits for the user
	// (tools.approval_timeout), e.g. "10m0s".
	ApprovalTimeout string `json:"approvalTimeout"`
	// Sandbox says how commands are confined: "landlock ABI 7, writes:
	// …, network: on", or why they are not.
	Sandbox string `json:"sandbox"`
	// Mode is the conversation's mode: agent, plan or ask.
	Mode fsm.Mode `json:"mode"`
	// Plan is the todo list (update_plan), empty when there is none.
	Plan []fsm.PlanItem `json:"plan"`
	// PlanProposal is the plan waiting for the user's decision
	// (loom.decidePlan), absent when none waits: a client that
	// reconnects draws it again.
	PlanProposal *PendingPlanStatus `json:"planProposal,omitempty"`
	// Effort is the reasoning effort the next request is sent with: the
	// conversation's (loom.setEffort), else [model] reasoning_effort;
	// "" when neither sets one (the server's default).
	// EffortChosen says the conversation chose it.
	Effort       string `json:"effort,omitempty"`
	EffortChosen bool   `json:"effortChosen,omitempty"`
	// LanguageServers names the language servers loom runs itself for
	// the folder's diagnostics (tools.diagnostics), running now.
	LanguageServers []string `json:"languageServers"`
	// ClientPrompt is the system prompt the client gave the
	// conversation (ACP systemPrompt), absent when none.
	ClientPrompt *ClientPrompt `json:"clientPrompt,omitempty"`
	// Children are the subagents running now (subagents.go).
	Children []ChildStatus `json:"children,omitempty"`
	// Completion is the folder's inline completion model, absent when
	// completion is off there (completion.go).
	Completion *CompletionStatus `json:"completion,omitempty"`
}

// PendingPlanStatus is a plan waiting for the user's decision: the
// propose_plan call and the plan (Markdown).
type PendingPlanStatus struct {
	CallID string `json:"callId"`
	Plan   string `json:"plan"`
}

func newConversation(f *Folder, o opening) *Conversation {
	s := &Conversation{
		folder:    f,
		opening:   o,
		ident:     identity{id: o.id, path: o.path},
		loop:      ownerLoop{in: make(chan func(), 64), quit: make(chan struct{}), done: make(chan struct{})},
		reads:     tools.NewReadTracker(),
		git:       gitState{lock: &f.worktreeMu},
		cards:     newToolCards(),
		turnTimes: map[uint64]time.Time{},
	}
	s.loop.step = func(ev fsm.Event) { s.step(ev) }
	s.turn.closeChildren = s.children.closeAll
	s.jr = convJournal{dir: f.dir, log: f.log, redactor: f.host.redactor, notify: s.out.notify, path: s.ident.journal,
		usage: func() fsm.Usage { _, u := s.m.Usage(); return u }}
	s.fresh = freshness{dir: f.dir, writes: &s.writes, reads: s.reads}
	s.hooks = &convHooks{folder: &f.hooks, dir: f.dir, heldHow: f.hookLoad.heldHow, id: s.ID, transcript: s.ident.journal,
		goWorker: s.loop.goWorker, post: s.loop.postEvent, postLive: s.loop.postEventLive, done: s.loop.done}
	s.out = out{ed: f.host.opts.Editor, r: f.host.redactor, dir: f.dir, id: func() string { return s.ident.own }, sharedID: s.ID,
		children: &s.children, hooks: s.hooks, shown: newShownTexts(f.host.redactor)}
	s.changes, s.verbs = newChangeVerbs(s)
	s.review = changes.NewReview(s.changes, reviewPort{s}, s.reads)
	s.children = children{folder: f, set: &s.settings, id: s.ID, journal: s.ident.journal, turn: s.turn.context,
		post: s.loop.post, postLive: s.loop.postEventLive, step: s.loop.step, notify: s.out.notify, workers: &s.loop.workers}
	s.elicits = elicitations{dir: f.dir, redactor: f.host.redactor, ed: f.host.opts.Editor, approve: s.out.approve, step: s.loop.postEventLive,
		asker: func() string {
			if l := s.children.up; l != nil {
				return l.rootID() // a child asks through its root's client
			}
			return s.ID()
		}}
	return s
}

// Done is closed when the session has shut down.
func (s *Conversation) Done() <-chan struct{} { return s.loop.done }

// Ask submits a prompt. It returns at once with the turn the prompt runs
// as: the next turn when the session is idle, a later one when it is
// queued behind a turn in flight. The turn streams through the Editor.
func (s *Conversation) Ask(ctx context.Context, prompt string) (uint64, error) {
	return s.ask(ctx, fsm.UserInput{Text: prompt})
}

// ask steps in, a prompt (AskWithImages: with its pictures). The prompt
// hooks (SessionStart with the conversation's first prompt,
// UserPromptSubmit) run first, on the asking goroutine, one prompt at a
// time; what they said is stepped just before the prompt.
func (s *Conversation) ask(ctx context.Context, in fsm.UserInput) (uint64, error) {
	// "/mcp.<server>.<prompt> args": the server's prompt (prompts/get),
	// asked here, never on the owner goroutine.
	if text, ok, perr := s.folder.mcp.ExpandPrompt(ctx, in.Text); ok {
		if perr != nil {
			return 0, perr
		}
		in.Text = text
	}
	var turn uint64
	var err error
	var source string
	hooked := s.hooks.hooksFor(agenthooks.UserPromptSubmit) != nil || s.hooks.hooksFor(agenthooks.SessionStart) != nil
	if hooked {
		s.promptMu.Lock()
		defer s.promptMu.Unlock()
	}
	callErr := s.loop.call(ctx, func() {
		switch {
		case s.cfgErr != nil:
			err = fmt.Errorf("%w: %w", ErrConfig, s.cfgErr)
			return
		case s.modelErr != nil:
			err = s.modelErr
			return
		}
		text, expErr := s.expandCommand(in.Text)
		if expErr != nil {
			err = expErr
			return
		}
		in.Text = text
		if hooked {
			source = s.session.source(s.m.Messages())
			return
		}
		turn = s.m.NextTurn()
		if _, stepErr := s.step(in); stepErr != nil {
			err = fmt.Errorf("ask: %w", stepErr)
		}
	})
	if callErr != nil || err != nil || !hooked {
		if callErr != nil {
			return 0, callErr
		}
		return turn, err
	}
	evs := s.hooks.prompt(ctx, &in, source)
	callErr = s.loop.call(ctx, func() {
		turn = s.m.NextTurn()
		if source != "" {
			s.session.done = true
		}
		for _, ev := range evs {
			ev.Turn = turn
			s.step(ev)
		}
		if _, stepErr := s.step(in); stepErr != nil {
			err = fmt.Errorf("ask: %w", stepErr)
		}
	})
	if callErr != nil {
		return 0, callErr
	}
	return turn, err
}

// Cancel stops the turn in flight, if any: the model stream is cancelled
// and tool processes are killed. Queued prompts start afterwards.
func (s *Conversation) Cancel(ctx context.Context) error {
	return s.loop.call(ctx, func() {
		if s.busy() {
			s.step(fsm.Cancel{})
		}
	})
}

// Reset cancels the turn in flight, drops the queued prompts and starts a
// new, empty conversation (fsm.Reset). Turn ids go on increasing.
func (s *Conversation) Reset(ctx context.Context) error {
	return s.loop.call(ctx, func() {
		if !s.busy() && len(s.m.Queued()) == 0 && !hasExchange(s.m.Messages()) {
			return // a new conversation already: keep its journal
		}
		s.step(fsm.Reset{})
		s.out.notify(Notification{Kind: NoteInfo, Text: "started a new conversation"})
	})
}

// hasExchange reports whether msgs holds more than a system prompt.
func hasExchange(msgs []fsm.Message) bool {
	for _, m := range msgs {
		if m.Role != fsm.RoleSystem {
			return true
		}
	}
	return false
}

// DropQueued forgets the prompts queued behind the turn in flight
// (fsm.DropQueued); the turn goes on.
func (s *Conversation) DropQueued(ctx context.Context) error {
	return s.loop.call(ctx, func() { s.step(fsm.DropQueued{}) })
}

// Status returns a snapshot of the session.
func (s *Conversation) Status(ctx context.Context) (Status, error) {
	var st Status
	err := s.loop.call(ctx, func() {
		ms := s.m.State()
		st = Status{
			Folder: s.folder.dir, State: ms.Kind.String(), Turn: ms.Turn,
			Model: modelName(s.m, s.cfg), Queued: s.m.Queued(), LastCommit: s.changes.Log.Last,
			Messages: ms.Messages, ConversationID: s.ident.own,
			Trusted: s.cfg.Trusted(), TrustNotice: s.trustNotice, Bash: s.cfg.Tools.Bash, Edits: s.cfg.Tools.Edits,
			Tokens: s.m.Tokens(),
		}
		st.Usage.Turn, st.Usage.Conversation = s.m.Usage()
		st.ContextWindow, st.ContextSource = s.contextWindow()
		if n, why := s.m.CutWindow(); n > 0 && n < int64(st.ContextWindow) {
			st.ContextSource = fmt.Sprintf("%s (instead of %d: %s); forgotten on loom.reset or a model switch", why, st.ContextWindow, st.ContextSource)
			st.ContextWindow = int(n)
		}
		st.MCPServers = s.folder.mcp.Status()
		st.Instructions = append([]InstructionFile{}, s.instr.files...)
		st.Skills, st.Commands, st.AgentFileProblems = s.agent.skills, slices.Concat(s.agent.commands, mcpPromptCommands(s.folder.mcp)), s.agent.notice
		st.Hooks = hookStatus(s.folder.hooks.Load())
		st.API = s.wireAPI(s.m)
		st.ApprovalTimeout = s.cfg.Tools.ApprovalTimeout.String()
		st.Sandbox = s.sandboxStatus()
		st.Mode, st.Plan = s.m.Mode(), append([]fsm.PlanItem{}, s.m.Plan()...)
		if call, plan, ok := s.m.PendingPlan(); ok {
			st.PlanProposal = &PendingPlanStatus{CallID: call, Plan: plan}
		}
		st.LanguageServers = append([]string{}, s.folder.lang.running()...)
		st.Children = s.children.status()
		st.Effort, st.EffortChosen = effortOf(s.m, s.cfg), s.m.Effort() != ""
		if s.clientPrompt != nil {
			c := *s.clientPrompt
			st.ClientPrompt = &c
		}
		if st.Queued == nil {
			st.Queued = []string{}
		}
		if s.cfgErr != nil {
			st.ConfigError = s.folder.host.redactor.String(s.cfgErr.Error())
		} else if s.modelErr != nil {
			st.ConfigError = s.folder.host.redactor.String(s.modelErr.Error())
		}
	})
	if err == nil {
		rules, rerr := s.folder.host.Rules().Commands(s.folder.dir)
		if rerr != nil {
			s.folder.log.Warn("approval rules unreadable", "err", rerr)
		}
		st.AllowCommands = nonNil(rules)
		servers, rerr := s.folder.host.Rules().MCPServers(s.folder.dir)
		if rerr != nil {
			s.folder.log.Warn("approval rules unreadable", "err", rerr)
		}
		st.AllowMCPServers = append([]string{}, servers...)
		st.Completion = s.folder.completionStatus()
	}
	return st, err
}

// History returns the conversation, for a client that redraws it.
func (s *Conversation) History(ctx context.Context) ([]fsm.Message, error) {
	var msgs []fsm.Message
	err := s.loop.call(ctx, func() { msgs = append([]fsm.Message(nil), s.m.Messages()...) })
	return redactMessages(s.folder.host.redactor, msgs), err
}

// Close shuts the conversation down: the turn in flight is cancelled,
// child processes are killed, and Close waits until every worker has
// returned. The journal stays, listed and loadable. (Folder.Close closes
// every conversation; Folder.CloseConversation one of them.)
func (s *Conversation) Close() {
	if s.folder != nil {
		s.folder.forget(s)
	}
	select {
	case <-s.loop.quit:
	default:
		close(s.loop.quit)
	}
	<-s.loop.done
}

func (s *Conversation) busy() bool {
	switch s.m.State().Kind {
	case fsm.CallingLlm, fsm.ExecutingTools, fsm.PostToolsHook, fsm.Error:
		return true
	}
	return false
}

// ID returns the conversation's id (see ConversationInfo.ID).
func (s *Conversation) ID() string { return s.ident.ID() }

// run is the owner goroutine. It starts once its folder has loaded its
// configuration.
func (s *Conversation) run() {
	defer close(s.loop.done)
	select {
	case <-s.folder.configured:
	case <-s.loop.quit:
		if s.opening.lock != nil {
			s.opening.lock.Release()
		}
		return
	}
	s.useSettings(s.folder.settingsNow())
	s.open(s.opening)
	s.out.state(s.m, &s.settings)
	for !s.stopping {
		select {
		case fn := <-s.loop.in:
			fn()
		case <-s.loop.quit:
			s.step(fsm.ShutdownRequested{})
			s.stopping = true
		}
	}
	s.drain()
	s.out.flush()
	s.jr.close()
}

// drain runs what workers still post until all of them have returned;
// the machine, shutting down, rejects their events.
func (s *Conversation) drain() {
	s.turn.stop()
	finished := make(chan struct{})
	go func() { s.loop.workers.Wait(); close(finished) }()
	for {
		select {
		case fn := <-s.loop.in:
			fn()
		case <-finished:
			return
		}
	}
}

// step applies ev to the machine and performs the resulting actions.
func (s *Conversation) step(ev fsm.Event) ([]fsm.Action, error) {
	cut, _ := s.m.CutWindow()
	acts, err := s.m.Step(ev)
	if err != nil {
		if errors.Is(err, fsm.ErrStaleEvent) {
			s.folder.log.Debug("dropped a stale event", "err", rejectedForLog(ev, err))
		} else {
			s.folder.log.Warn("event rejected", "err", rejectedForLog(ev, err))
		}
		return nil, err
	}
	s.jr.event(ev)
	s.children.stepped(ev, acts, s.m)
	if e, ok := ev.(fsm.LlmError); ok && e.Kind == fsm.ErrorContextLength {
		s.folder.window.forget() // the server's window is not what it said
	} else if now, _ := s.m.CutWindow(); now > 0 && now != cut {
		s.folder.window.forget()
	}
	for _, a := range acts {
		s.perform(a)
		if _, ok := a.(fsm.WaitForInput); ok {
			s.jr.sync()
		}
	}
	s.out.state(s.m, &s.settings)
	return acts, nil
}

// Folder returns the workspace folder the conversation belongs to.
func (c *Conversation) Folder() *Folder { return c.folder }
