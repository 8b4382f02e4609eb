package workspace

import (
	"context"
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

// children is a conversation's side of the subagents (subagents.go says
// what one is), both ways. Down: the children it started (StartChild)
// and still runs, by the agent call that started each — it starts,
// stops and closes them and tells the user of each (NoteSubagent). Up:
// when the conversation is itself a child, its link to its parent's
// agent call — it narrows the child's settings, machine and policy to
// the parent's, and reports the child's usage, progress and end on that
// call.
//
// It lives on its conversation's owner goroutine (no lock), except
// where a method says otherwise, and reaches the conversation only
// through the functions below: it never holds the *Conversation.
type children struct {
	// up ties the conversation to its parent's agent call; nil for the
	// user's own conversation. Set before the conversation runs.
	up *childLink
	// running are the running children, by the parent's call id.
	running map[string]*Conversation
	// log is every child the conversation started, with how it ended
	// (from its journal, then as it steps): what loom.history redraws.
	log []journal.ChildRecord
	// spawning is the policy of the batch whose agent call is being
	// stepped (SpawnRequested), nil otherwise: the child started by
	// that step keeps it as its parent's.
	spawning *toolcall.Policy

	// folder is the conversation's folder (a child is a conversation of
	// it); set the conversation's settings, which settings reloads
	// replace in place.
	folder *Folder
	set    *settings
	// id and journal are the conversation's id and journal path ("" when
	// not journaled); any goroutine.
	id, journal func() string
	// turn is the context of the turn in flight (CancelInFlight
	// cancels it).
	turn func() context.Context
	// post runs a function on the conversation's goroutine, postLive
	// steps an event there unless ctx is gone, notify tells the editor
	// (owner goroutine), workers counts the goroutines drain waits for.
	post     func(func())
	postLive func(ctx context.Context, ev fsm.Event)
	step     func(fsm.Event)
	notify   func(Notification)
	workers  *workerGroup
}

// childLink ties a child conversation to its parent's agent call.
type childLink struct {
	// parent is the parent's children.
	parent *children
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
	// child would have), never more (children.policy).
	policy toolcall.Policy
	// conv is the child's conversation id.
	conv string
	// model is the model its definition chose among the user's
	// [subagents] models; "" for the conversation's.
	model string
	// timer fires the child's wall-time cap.
	timer *time.Timer
	// asked is the child's prompt turn; ended is set once reported.
	asked uint64
	ended bool
	// tokens is the child's running sum of tokens (set on the child's
	// goroutine, read by its updates on any goroutine).
	tokens atomic.Int64
	// stopped is set once StopChild asked to stop it; any goroutine.
	stopped atomic.Bool
	// activity is what it did last (progress), nil before; any
	// goroutine.
	activity atomic.Pointer[string]
}

// rootID is the id of the conversation at the top of the child's
// parents.
func (l *childLink) rootID() string {
	p := l.parent
	for p.up != nil {
		p = p.up.parent
	}
	return p.id()
}

// naming is what the user is told of the child.
func (l *childLink) naming() *SubagentInfo {
	return &SubagentInfo{Parent: l.parent.id(), CallID: l.callID, Turn: l.turn, Child: l.id, Conversation: l.conv, Agent: l.agent.Name, Task: l.start.Task, Depth: l.start.Depth, ReadOnly: l.start.ReadOnly, Model: l.model}
}

// start performs StartChild: a child conversation of its own, which is
// asked the task at once.
func (k *children) start(a fsm.StartChild) {
	def, ok := agentfiles.Find(k.set.agent.agents, a.Agent)
	if !ok {
		def = agentfiles.Builtin()[1] // the worker: the parent's tools, no more
	}
	ctx := k.turn()
	link := &childLink{parent: k, ctx: ctx, turn: a.Turn, callID: a.CallID, id: a.Child, start: a, agent: def, policy: k.parentPolicy()}
	child := newConversation(k.folder, k.opening(a.Child))
	child.children.up, link.conv = link, child.ID()
	if k.running == nil {
		k.running = map[string]*Conversation{}
	}
	k.running[a.CallID] = child
	link.timer = time.AfterFunc(a.Timeout, func() { k.postLive(ctx, fsm.ChildTimedOut{Turn: a.Turn, CallID: a.CallID}) })
	model, why := childModel(def.Model, k.set.cfg.Subagents.Models)
	link.model = model
	if n := len(k.log); n > 0 && k.log[n-1].Start.Child == a.Child {
		k.log[n-1].Model = model
	}
	info := link.naming()
	info.State = "running"
	if why != "" {
		k.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: info.Words() + ": " + why})
	}
	k.notify(Notification{Kind: NoteSubagent, Turn: a.Turn, Subagent: info})
	go child.run()
	go func() {
		if model != "" {
			// Its machine's choice (journaled in its journal): its every
			// request asks for the model, on the user's own server.
			if _, err := child.Controls().SetModel(ctx, model); err != nil {
				k.postLive(ctx, fsm.ChildFinished{Turn: a.Turn, CallID: a.CallID, Result: "the subagent could not start: " + err.Error(), Failed: true})
				return
			}
		}
		turn, err := child.Ask(ctx, a.Task)
		if err != nil {
			k.postLive(ctx, fsm.ChildFinished{Turn: a.Turn, CallID: a.CallID, Result: "the subagent could not start: " + err.Error(), Failed: true})
			return
		}
		child.loop.post(func() { link.asked = turn })
		if link.stopped.Load() {
			// Stopped before it was asked: that cancel found no turn.
			_ = child.Cancel(context.Background())
		}
	}()
}

// parentPolicy is the policy a child started now is never given more
// than: the batch's whose agent call is being stepped, else (no batch
// asks: a replayed or stray StartChild) the conversation's own as a
// batch would have it now, read-only.
func (k *children) parentPolicy() toolcall.Policy {
	if k.spawning != nil {
		return k.spawning.Inherit()
	}
	p := toolcall.Policy{Root: k.folder.dir, Mode: fsm.ModePlan, ReadOnly: true, Bash: config.PolicyDeny, Fetch: config.PolicyDeny}
	return k.policy(p)
}

// policy is the policy of a batch of the conversation: own (what the
// conversation's settings and mode give) for the user's conversation; a
// child's asks are added to its own (its definition's read-only,
// permissionMode) and the whole narrowed by its parent's, so that it is
// never more than the parent's whatever the definition asks.
func (k *children) policy(own toolcall.Policy) toolcall.Policy {
	l := k.up
	if l == nil {
		return own
	}
	if l.start.ReadOnly {
		own.Mode = fsm.ModePlan
	}
	if l.agent.Unasked {
		own.Bash, own.Fetch, own.Trusted = config.PolicyAllow, config.PolicyAllow, true
		own.MCP = map[string]config.Policy{}
		for server := range k.set.mcpPolicies {
			own.MCP[server] = config.PolicyAllow
		}
	}
	return l.policy.Narrow(own)
}

// opening is where child id's journal starts: in the subagents
// directory beside the parent's journal, named after it; not journaled
// when the parent is not.
func (k *children) opening(id string) opening {
	parent := k.journal()
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
	return opening{id: journal.ID(k.folder.dir, created), path: path, lock: lock, fresh: true, created: created}
}

// stop performs StopChild: the child's turn is cancelled, and its end
// reports what it has (ChildFinished).
func (k *children) stop(a fsm.StopChild) {
	child := k.running[a.CallID]
	if child == nil {
		return
	}
	link := child.children.up
	k.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: link.naming().Words() + " was stopped: " + a.Reason})
	link.stopped.Store(true) // before the cancel: start cancels again if it asks after (a cancel before the ask stops nothing)
	go child.Cancel(context.Background())
}

// closeAll closes the children still running (the parent's turn is
// cancelled, or the parent shuts down): each cancels its own turn, its
// tools' processes and its own children, and flushes its journal.
func (k *children) closeAll() {
	for id, child := range k.running {
		delete(k.running, id)
		link := child.children.up
		link.timer.Stop()
		info := link.naming()
		info.State = "cancelled"
		k.notify(Notification{Kind: NoteSubagent, Turn: link.turn, Subagent: info})
		k.workers.Add(1)
		go func() {
			defer k.workers.Done()
			_ = child.Cancel(context.Background()) // its turn ends, cancelled, and its own children with it
			child.Close()
		}()
	}
}

// turnEnded is the child's side of its end (on the child's owner
// goroutine; m is its machine): its last answer and usage go to the
// parent, which steps ChildFinished and closes it.
func (k *children) turnEnded(a fsm.WaitForInput, m *fsm.Machine) {
	l := k.up
	if l == nil || l.ended || a.Turn < l.asked || l.asked == 0 && a.Turn == 0 {
		return
	}
	l.ended = true
	answer := lastAnswer(m.Messages())
	_, total := m.Usage()
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
	parent := l.parent
	// One function on the parent's goroutine: were the end stepped and
	// the child closed in two, the parent's next model response could
	// end its turn in between, and its end would close the child as
	// cancelled.
	parent.post(func() {
		if l.ctx.Err() == nil {
			parent.step(fsm.ChildFinished{Turn: l.turn, CallID: l.callID, Result: answer, Failed: failed, Usage: total})
		}
		parent.finished(l, state, total)
	})
}

// finished closes the child of l once its end was stepped (on the
// parent's goroutine), unless it was closed already.
func (k *children) finished(l *childLink, state string, total fsm.Usage) {
	child := k.running[l.callID]
	if child == nil || child.children.up != l {
		return
	}
	delete(k.running, l.callID)
	l.timer.Stop()
	info := l.naming()
	info.State, info.Usage = state, &total
	k.notify(Notification{Kind: NoteSubagent, Turn: l.turn, Subagent: info})
	k.workers.Add(1)
	go func() { defer k.workers.Done(); child.Close() }()
}

// stepped tells the parent what the child's accepted event means for
// it (m is the child's machine): its tokens so far (the caps), and its
// progress on the parent's agent call.
func (k *children) stepped(ev fsm.Event, acts []fsm.Action, m *fsm.Machine) {
	k.log = journal.Spawned(k.log, ev, acts)
	l := k.up
	if l == nil || l.ended {
		return
	}
	if _, ok := ev.(fsm.LlmCompleted); ok {
		_, total := m.Usage()
		l.tokens.Store(total.TotalTokens)
		l.parent.postLive(l.ctx, fsm.ChildUsage{Turn: l.turn, CallID: l.callID, Tokens: total.TotalTokens})
		// Its tokens on each model response, not only with its next
		// tool call: an update with what it did last.
		activity := "the model answered"
		if p := l.activity.Load(); p != nil {
			activity = *p
		}
		k.update("running", activity)
	}
}

// progress shows what the child does (msg; state running, or waiting
// for the user's approval) on the parent's agent call, and as an update
// of the child (NoteSubagent with Activity) while the parent still
// counts it running; any goroutine.
func (k *children) progress(state, msg string) {
	l := k.up
	if l == nil || l.ended {
		return
	}
	l.activity.Store(&msg)
	l.parent.postLive(l.ctx, fsm.ToolProgress{Turn: l.turn, CallID: l.callID, Message: l.agent.Name + " " + l.id + ": " + msg})
	k.update(state, msg)
}

// update sends the child's state to its parent's client (NoteSubagent
// with Activity) while the parent still counts it running; any
// goroutine.
func (k *children) update(state, msg string) {
	l := k.up
	info := l.naming()
	info.State, info.Activity = state, msg
	if t := l.tokens.Load(); t > 0 {
		info.Usage = &fsm.Usage{TotalTokens: t}
	}
	parent := l.parent
	parent.post(func() {
		if c := parent.running[l.callID]; c != nil && c.children.up == l && l.ctx.Err() == nil {
			parent.notify(Notification{Kind: NoteSubagent, Turn: l.turn, Subagent: info})
		}
	})
}

// narrow makes the folder's settings a child's: the parent's tools that
// the definition allows, no more.
func (k *children) narrow(st *settings) {
	if k.up == nil || st.registry == nil {
		return
	}
	var kept []tools.Tool
	for _, t := range st.registry.All() {
		if t.Name() == fsm.ProposePlanTool {
			continue // a plan is the user's to accept, and no user answers a child
		}
		if t.Name() == fsm.AgentTool || k.up.agent.Allows(t.Name()) {
			kept = append(kept, t)
		}
	}
	st.registry = tools.NewRegistry(kept...)
	st.schemas = toolSchemas(st.registry)
}

// configure makes the machine configuration a child's: one level
// deeper, read-only when its parent's mode is or its definition asks,
// with its definition's instructions after the system prompt.
func (k *children) configure(c *fsm.Config) {
	l := k.up
	if l == nil {
		return
	}
	c.Depth = l.start.Depth
	c.ReadOnly = l.start.ReadOnly
	c.SystemPrompt += "\n\n## You are a subagent\nAnother agent gave you one task; the user sees your work but does not answer you. " +
		"Work on the task alone, then end with your final answer: it is all the other agent receives."
	if l.agent.Instructions != "" {
		c.SystemPrompt += "\n\n## Your instructions (" + l.agent.Name + ")\n" + l.agent.Instructions
	}
}

// status lists the running children (on the owner goroutine).
func (k *children) status() []ChildStatus {
	var out []ChildStatus
	for _, c := range k.running {
		info := c.children.up.naming()
		info.State = "running"
		out = append(out, ChildStatus{SubagentInfo: *info, Conversation: c.ID()})
	}
	return out
}
