package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// Subagents. The model calls the agent tool with an agent type and a
// task; the call goes through the stages every call goes through
// (PreToolUse hooks, policy, run), and its run stage steps
// fsm.SpawnRequested instead of running a tool: the machine applies the
// caps and answers StartChild (or completes the call with a tool error).
//
// A child is a Conversation of its own — its own fsm.Machine and
// journal — on the parent's folder, with the parent's settings (tools,
// tools.bash, sandbox, approval rules, trust, protected names) narrowed
// by construction: its machine is locked read-only when the parent's
// mode is read-only or its definition asks (fsm.Config.ReadOnly), it
// sits one level deeper (fsm.Config.Depth: the spawn caps apply), and its
// tools are those of the parent that its definition allows. Its tool
// calls run through exactly the same code as the parent's (toolcall.Batch, served by callRun):
// there is no second path. Its approvals go to the user through the
// same editor, named as the child's (Approval.Subagent), and each wait is
// shown on the parent's agent call, so a waiting child never hangs the
// parent silently.
//
// The parent's journal keeps SpawnRequested and ChildFinished (the
// child's answer): replaying the parent shows the answer without running
// the child. The child's journal, beside the parent's in a subagents
// directory named after it, replays by itself.

// agentTool is the agent tool as the model sees it. Its Run is never
// called by a conversation: the run stage starts a child instead
// (spawn).
type agentTool struct {
	agents *atomic.Pointer[[]agentfiles.Agent]
}

type agentParams struct {
	Agent string `json:"agent"`
	Task  string `json:"task"`
}

func (agentTool) Name() string   { return fsm.AgentTool }
func (agentTool) Mutating() bool { return false }

func (t agentTool) Description() string {
	var agents []agentfiles.Agent
	if p := t.agents.Load(); p != nil {
		agents = *p
	}
	if len(agents) == 0 {
		agents = agentfiles.Builtin()
	}
	return "Hands a self-contained task to a subagent: a conversation of its own, with its own context, that works on the task and " +
		"returns its final answer as this call's result (only that answer comes back: ask it for what you need). Several calls in one " +
		"response run in parallel. A subagent has your permissions or fewer, never more, and cannot start subagents itself.\n" +
		"The agents (agent: its name):\n" + agentfiles.AgentsListing(agents, 8<<10)
}

func (agentTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string","description":"the agent's name, e.g. researcher or worker"},"task":{"type":"string","description":"what the subagent must do and what to answer; it sees nothing of this conversation but this"}},"required":["agent","task"],"additionalProperties":false}`)
}

func (agentTool) Run(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{Text: "tool error: " + fsm.AgentTool + ": subagents run only inside a conversation", IsError: true}, nil
}

// spawn is the agent call's run stage: it names the agent and steps
// SpawnRequested; the machine starts the child (StartChild) or completes
// the call itself. The call's outcome is settled either way.
func (r callRun) spawn(ctx context.Context, c fsm.ToolCall) toolcall.Outcome {
	s, b := r.s, r.b
	var p agentParams
	if err := json.Unmarshal([]byte(c.Arguments), &p); err != nil {
		return toolcall.Outcome{Result: "tool error: " + fsm.AgentTool + ": " + err.Error(), IsError: true}
	}
	var agents []agentfiles.Agent
	if ps := s.folder.agents.Load(); ps != nil {
		agents = *ps
	}
	def, ok := agentfiles.Find(agents, p.Agent)
	if !ok {
		names := make([]string, len(agents))
		for i, a := range agents {
			names[i] = a.Name
		}
		return toolcall.Outcome{Result: fmt.Sprintf("tool error: %s: no agent %q; the agents are: %s", fsm.AgentTool, p.Agent, strings.Join(names, ", ")), IsError: true}
	}
	ev := fsm.SpawnRequested{Turn: b.turn, CallID: c.ID, Agent: def.Name, Task: p.Task, ReadOnly: def.ReadOnly}
	policy := b.policy
	s.postLive(ctx, func() {
		s.spawning = &policy // the child StartChild starts keeps it
		defer func() { s.spawning = nil }()
		s.step(ev)
	})
	return toolcall.Outcome{Settled: true}
}

// childLink ties a child conversation to its parent's agent call.
type childLink struct {
	parent *Conversation
	// ctx is the parent's turn: what the child reports after it was
	// cancelled is dropped.
	ctx    context.Context
	turn   uint64
	callID string
	// id is the child's id among its parent's (fsm.ChildID); start
	// the machine's StartChild.
	id    string
	start fsm.StartChild
	agent agentfiles.Agent
	// policy is the parent's batch policy when it asked for the child:
	// each of the child's batches runs under policy.Narrow(what the
	// child would have), never more (childPolicy).
	policy toolcall.Policy
	// conv is the child's conversation id.
	conv string
	// timer fires the child's wall-time cap.
	timer *time.Timer
	// asked is the child's prompt turn; ended is set once reported.
	asked uint64
	ended bool
	// tokens is the child's running sum of tokens (set on the child's
	// goroutine, read by its updates on any goroutine).
	tokens atomic.Int64
}

// root is the conversation at the top of the child's parents.
func (l *childLink) root() *Conversation {
	c := l.parent
	for c.link != nil {
		c = c.link.parent
	}
	return c
}

// naming is what the user is told of the child.
func (l *childLink) naming() *SubagentInfo {
	return &SubagentInfo{Parent: l.parent.ID(), CallID: l.callID, Turn: l.turn, Child: l.id, Conversation: l.conv, Agent: l.agent.Name, Task: l.start.Task, Depth: l.start.Depth, ReadOnly: l.start.ReadOnly}
}

// SubagentInfo names a child conversation: on each of its notifications
// (Notification.Subagent) and on its approvals (Approval.Subagent).
type SubagentInfo struct {
	// Parent is the parent conversation's id, CallID its agent call,
	// Turn the parent's turn.
	Parent string `json:"parent"`
	CallID string `json:"callId"`
	Turn   uint64 `json:"turn"`
	// Child is the child's id among its parent's children;
	// Conversation is the child's conversation id (a child's own
	// notifications carry it as Notification.Conversation).
	Child        string `json:"child"`
	Conversation string `json:"conversation,omitempty"`
	Agent        string `json:"agent"`
	Task         string `json:"task"`
	Depth        int    `json:"depth"`
	// ReadOnly says the child may not change files or run commands.
	ReadOnly bool `json:"readOnly,omitempty"`
	// State is the child's state on NoteSubagent: running, waiting (for
	// the user's approval), completed, failed, cancelled.
	State string `json:"state,omitempty"`
	// Usage is the child's token usage so far (NoteSubagent).
	Usage *fsm.Usage `json:"usage,omitempty"`
	// Activity is what the child does now ("read_file succeeded",
	// "waits for your approval: bash …"), set on the NoteSubagent updates
	// sent while it runs; absent on the notes of its start and end, so a
	// front end that shows only those drops the updates.
	Activity string `json:"activity,omitempty"`
}

// Words says who asks, for an approval: "subagent researcher (task: …)".
func (i *SubagentInfo) Words() string {
	if i == nil {
		return ""
	}
	task := strings.Join(strings.Fields(i.Task), " ")
	if r := []rune(task); len(r) > 80 {
		task = string(r[:80]) + "…"
	}
	return fmt.Sprintf("subagent %s %s (task: %s)", i.Agent, i.Child, task)
}

// startChild performs StartChild: a child conversation of its own, which
// is asked the task at once.
func (s *Conversation) startChild(a fsm.StartChild) {
	def, ok := agentfiles.Find(s.agent.agents, a.Agent)
	if !ok {
		def = agentfiles.Builtin()[1] // the worker: the parent's tools, no more
	}
	ctx := s.turnContext()
	link := &childLink{parent: s, ctx: ctx, turn: a.Turn, callID: a.CallID, id: a.Child, start: a, agent: def, policy: s.parentPolicy()}
	child := newConversation(s.folder, s.childOpening(a.Child))
	child.link, link.conv = link, child.ID()
	if s.children == nil {
		s.children = map[string]*Conversation{}
	}
	s.children[a.CallID] = child
	link.timer = time.AfterFunc(a.Timeout, func() { s.postEventLive(ctx, fsm.ChildTimedOut{Turn: a.Turn, CallID: a.CallID}) })
	info := link.naming()
	info.State = "running"
	s.notify(Notification{Kind: NoteSubagent, Turn: a.Turn, Subagent: info})
	go child.run()
	go func() {
		turn, err := child.Ask(ctx, a.Task)
		if err != nil {
			s.postEventLive(ctx, fsm.ChildFinished{Turn: a.Turn, CallID: a.CallID, Result: "the subagent could not start: " + err.Error(), Failed: true})
			return
		}
		child.post(func() { link.asked = turn })
	}()
}

// parentPolicy is the policy a child started now is never given more
// than: the batch's whose agent call is being stepped, else (no batch
// asks: a replayed or stray StartChild) the conversation's own as a
// batch would have it now, read-only.
func (s *Conversation) parentPolicy() toolcall.Policy {
	if s.spawning != nil {
		return s.spawning.Inherit()
	}
	p := toolcall.Policy{Root: s.folder.dir, Mode: fsm.ModePlan, ReadOnly: true, Bash: config.PolicyDeny, Fetch: config.PolicyDeny}
	return s.childPolicy(p)
}

// childPolicy is the policy of a batch of s: own (what the
// conversation's settings and mode give) for the user's conversation; a
// child's asks are added to its own (its definition's read-only,
// permissionMode) and the whole narrowed by its parent's, so that it is
// never more than the parent's whatever the definition asks.
func (s *Conversation) childPolicy(own toolcall.Policy) toolcall.Policy {
	if s.link == nil {
		return own
	}
	if s.link.start.ReadOnly {
		own.Mode = fsm.ModePlan
	}
	if s.link.agent.Unasked {
		own.Bash, own.Fetch, own.Trusted = config.PolicyAllow, config.PolicyAllow, true
		own.MCP = map[string]config.Policy{}
		for server := range s.mcpPolicies {
			own.MCP[server] = config.PolicyAllow
		}
	}
	return s.link.policy.Narrow(own)
}

// childOpening is where child id's journal starts: in the subagents
// directory beside the parent's journal, named after it; not journaled
// when the parent is not.
func (s *Conversation) childOpening(id string) opening {
	parent := s.journalPathShared()
	if parent == "" {
		return opening{id: journal.UnjournaledID()}
	}
	dir := filepath.Join(filepath.Dir(parent), "subagents")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return opening{id: journal.UnjournaledID(), notice: err.Error() + ": this subagent is not journaled"}
	}
	path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(parent), ".jsonl")+"."+id+".jsonl")
	lock, err := journal.Lock(path)
	if err != nil {
		return opening{id: journal.UnjournaledID(), notice: err.Error() + ": this subagent is not journaled"}
	}
	created := time.Now()
	return opening{id: journal.ID(s.folder.dir, created), path: path, lock: lock, fresh: true, created: created}
}

// ChildJournal is the journal of child id of the conversation whose
// journal is at parent.
func ChildJournal(parent, id string) string {
	return filepath.Join(filepath.Dir(parent), "subagents", strings.TrimSuffix(filepath.Base(parent), ".jsonl")+"."+id+".jsonl")
}

// stopChild performs StopChild: the child's turn is cancelled, and its
// end reports what it has (ChildFinished).
func (s *Conversation) stopChild(a fsm.StopChild) {
	child := s.children[a.CallID]
	if child == nil {
		return
	}
	s.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: child.link.naming().Words() + " was stopped: " + a.Reason})
	go child.Cancel(context.Background())
}

// closeChildren closes the children still running (the parent's turn is
// cancelled, or the parent shuts down): each cancels its own turn, its
// tools' processes and its own children, and flushes its journal.
func (s *Conversation) closeChildren() {
	for id, child := range s.children {
		delete(s.children, id)
		child.link.timer.Stop()
		info := child.link.naming()
		info.State = "cancelled"
		s.notify(Notification{Kind: NoteSubagent, Turn: child.link.turn, Subagent: info})
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			_ = child.Cancel(context.Background()) // its turn ends, cancelled, and its own children with it
			child.Close()
		}()
	}
}

// childTurnEnded is the child's side of its end (on the child's owner
// goroutine): its last answer and usage go to the parent, which steps
// ChildFinished and closes it.
func (s *Conversation) childTurnEnded(a fsm.WaitForInput) {
	l := s.link
	if l == nil || l.ended || a.Turn < l.asked || l.asked == 0 && a.Turn == 0 {
		return
	}
	l.ended = true
	answer := lastAnswer(s.m.Messages())
	_, total := s.m.Usage()
	failed := a.Outcome != fsm.TurnDone
	if failed && answer == "" {
		answer = "the subagent's turn " + string(a.Outcome)
	}
	state := "completed"
	switch a.Outcome {
	case fsm.TurnCancelled:
		state = "cancelled"
	case fsm.TurnFailed:
		state = "failed"
	}
	parent, child := l.parent, s
	parent.postEventLive(l.ctx, fsm.ChildFinished{Turn: l.turn, CallID: l.callID, Result: answer, Failed: failed, Usage: total})
	parent.post(func() {
		if parent.children[l.callID] != child {
			return
		}
		delete(parent.children, l.callID)
		l.timer.Stop()
		info := l.naming()
		info.State, info.Usage = state, &total
		parent.notify(Notification{Kind: NoteSubagent, Turn: l.turn, Subagent: info})
		parent.workers.Add(1)
		go func() { defer parent.workers.Done(); child.Close() }()
	})
}

// lastAnswer is the text of the conversation's last assistant message
// with text.
func lastAnswer(msgs []fsm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == fsm.RoleAssistant && strings.TrimSpace(m.Content) != "" {
			return m.Content
		}
	}
	return ""
}

// childStepped tells the parent what the child's accepted event means
// for it: its tokens so far (the caps), and its progress on the
// parent's agent call.
func (s *Conversation) childStepped(ev fsm.Event) {
	l := s.link
	if l == nil || l.ended {
		return
	}
	if _, ok := ev.(fsm.LlmCompleted); ok {
		_, total := s.m.Usage()
		l.tokens.Store(total.TotalTokens)
		l.parent.postEventLive(l.ctx, fsm.ChildUsage{Turn: l.turn, CallID: l.callID, Tokens: total.TotalTokens})
	}
}

// childProgress shows what the child does (msg; state running, or
// waiting for the user's approval) on the parent's agent call, and as an
// update of the child (NoteSubagent with Activity) while the parent still
// counts it running. It may run on any goroutine.
func (s *Conversation) childProgress(state, msg string) {
	l := s.link
	if l == nil || l.ended {
		return
	}
	info := l.naming()
	info.State, info.Activity = state, msg
	if t := l.tokens.Load(); t > 0 {
		info.Usage = &fsm.Usage{TotalTokens: t}
	}
	parent := l.parent
	parent.postLive(l.ctx, func() {
		parent.step(fsm.ToolProgress{Turn: l.turn, CallID: l.callID, Message: l.agent.Name + " " + l.id + ": " + msg})
		if parent.children[l.callID] == s {
			parent.notify(Notification{Kind: NoteSubagent, Turn: l.turn, Subagent: info})
		}
	})
}

// ErrNoSubagent is StopSubagent's error when no child of that id runs.
var ErrNoSubagent = errors.New("no such subagent runs")

// StopSubagent stops the running child child (its id among this
// conversation's children, SubagentInfo.Child) and only it: the parent's
// turn goes on, and its model reads that the user stopped the child,
// with what the child had (fsm.ChildStopAsked).
func (s *Conversation) StopSubagent(ctx context.Context, child string) error {
	var stepErr error
	err := s.call(ctx, func() {
		for _, c := range s.children {
			if l := c.link; l.id == child {
				_, stepErr = s.step(fsm.ChildStopAsked{Turn: l.turn, CallID: l.callID})
				return
			}
		}
		stepErr = fmt.Errorf("%w: %q", ErrNoSubagent, child)
	})
	if err != nil {
		return err
	}
	return stepErr
}

// narrowForChild makes the folder's settings a child's: the parent's
// tools that the definition allows, no more.
func (s *Conversation) narrowForChild(st *settings) {
	if s.link == nil || st.registry == nil {
		return
	}
	var kept []tools.Tool
	for _, t := range st.registry.All() {
		if t.Name() == fsm.ProposePlanTool {
			continue // a plan is the user's to accept, and no user answers a child
		}
		if t.Name() == fsm.AgentTool || s.link.agent.Allows(t.Name()) {
			kept = append(kept, t)
		}
	}
	st.registry = tools.NewRegistry(kept...)
	st.schemas = toolSchemas(st.registry)
}

// childConfig is the machine configuration of a child: one level deeper,
// read-only when its parent's mode is or its definition asks, with its
// definition's instructions after the system prompt.
func (s *Conversation) childConfig(c *fsm.Config) {
	if s.link == nil {
		return
	}
	c.Depth = s.link.start.Depth
	c.ReadOnly = s.link.start.ReadOnly
	c.SystemPrompt += "\n\n## You are a subagent\nAnother agent gave you one task; the user sees your work but does not answer you. " +
		"Work on the task alone, then end with your final answer: it is all the other agent receives."
	if s.link.agent.Instructions != "" {
		c.SystemPrompt += "\n\n## Your instructions (" + s.link.agent.Name + ")\n" + s.link.agent.Instructions
	}
}

// spawnCaps are the machine's caps on children from [subagents]; a
// hand-built configuration without them keeps the machine's defaults.
func spawnCaps(c config.Subagents) fsm.SpawnCaps {
	if c == (config.Subagents{}) {
		return fsm.SpawnCaps{}
	}
	depth := c.MaxDepth
	if depth == 0 {
		depth = -1 // config's 0 turns subagents off; fsm's 0 means default
	}
	return fsm.SpawnCaps{MaxDepth: depth, MaxRunning: c.MaxRunning, MaxPerTurn: c.MaxPerTurn,
		MaxTokensPerChild: int64(c.MaxTokens), MaxTokensPerTurn: int64(c.MaxTurnTokens), MaxWallTime: c.Timeout.Duration}
}

// ChildStatus is a running child in loom.status.
type ChildStatus struct {
	SubagentInfo
	// Conversation is the child's conversation id.
	Conversation string `json:"conversation"`
}

// childStatus lists the running children (on the owner goroutine).
func (s *Conversation) childStatus() []ChildStatus {
	var out []ChildStatus
	for _, c := range s.children {
		info := c.link.naming()
		info.State = "running"
		out = append(out, ChildStatus{SubagentInfo: *info, Conversation: c.ID()})
	}
	return out
}
