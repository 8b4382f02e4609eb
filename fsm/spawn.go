package fsm

import (
	"fmt"
	"strings"
	"time"
)

// Subagents. The model hands a task to a child conversation by calling
// the agent tool (AgentTool); the caller, instead of running the call,
// steps SpawnRequested. The caps live here, in the transition: a spawn
// past one of them completes the call at once with a tool error the
// model reads, and a running child past its token or time budget is
// stopped (StopChild). The child is a conversation of its own (its own
// Machine, at depth Config.Depth+1); its end, ChildFinished, completes
// the parent's call with the child's final answer, bounded.
//
// Time is an input: StartChild carries the child's wall-time budget, the
// caller starts a timer and steps ChildTimedOut when it fires.

// AgentTool is the name of the tool that starts a subagent.
const AgentTool = "agent"

// SpawnCaps bound what a conversation's subagents may take. The zero
// value of each field means its default, as listed.
type SpawnCaps struct {
	// MaxDepth is how deep children nest: a conversation at depth
	// Config.Depth may spawn only while Depth < MaxDepth. Default 1 (the
	// user's conversation may spawn, a child may not); negative: none.
	MaxDepth int `json:",omitempty"`
	// MaxRunning bounds the children running at once. Default 4.
	MaxRunning int `json:",omitempty"`
	// MaxPerTurn bounds the children started in one user turn. Default 8.
	MaxPerTurn int `json:",omitempty"`
	// MaxTokensPerChild bounds one child's tokens (prompt + completion,
	// summed over its requests). Default 200,000.
	MaxTokensPerChild int64 `json:",omitempty"`
	// MaxTokensPerTurn bounds all the children's tokens in one user
	// turn. Default 1,000,000.
	MaxTokensPerTurn int64 `json:",omitempty"`
	// MaxWallTime bounds one child's running time. Default 10 minutes.
	MaxWallTime time.Duration `json:",omitempty"`
	// MaxResultBytes bounds the child's answer the parent's model reads.
	// Default 16 KiB.
	MaxResultBytes int `json:",omitempty"`
}

func (c SpawnCaps) withDefaults() SpawnCaps {
	if c.MaxDepth == 0 {
		c.MaxDepth = 1
	}
	if c.MaxRunning <= 0 {
		c.MaxRunning = 4
	}
	if c.MaxPerTurn <= 0 {
		c.MaxPerTurn = 8
	}
	if c.MaxTokensPerChild <= 0 {
		c.MaxTokensPerChild = 200_000
	}
	if c.MaxTokensPerTurn <= 0 {
		c.MaxTokensPerTurn = 1_000_000
	}
	if c.MaxWallTime <= 0 {
		c.MaxWallTime = 10 * time.Minute
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 16 << 10
	}
	return c
}

// SpawnRequested asks to start a child for call CallID (an AgentTool
// call) of turn Turn: Agent is the agent type, Task the child's prompt,
// ReadOnly whether its definition asks for a read-only child. Valid
// while the call runs.
type SpawnRequested struct {
	Turn     uint64
	CallID   string
	Agent    string
	Task     string
	ReadOnly bool `json:",omitempty"`
}

// ChildUsage reports the tokens child CallID has used so far (a running
// sum). Past its budget or the turn's, the machine stops it.
type ChildUsage struct {
	Turn   uint64
	CallID string
	Tokens int64
}

// ChildTimedOut tells the machine that child CallID's wall-time budget
// (StartChild.Timeout) has elapsed.
type ChildTimedOut struct {
	Turn   uint64
	CallID string
}

// ChildStopAsked tells the machine that the user asked to stop child
// CallID (one child, not the parent's turn): the machine stops it as it
// stops a child past a cap, and the model reads that the user stopped
// it with what it had.
type ChildStopAsked struct {
	Turn   uint64
	CallID string
}

// ChildFinished ends child CallID: Result is its final answer (or why it
// failed, Failed set), Usage what it used. It completes the call.
type ChildFinished struct {
	Turn   uint64
	CallID string
	Result string
	Failed bool  `json:",omitempty"`
	Usage  Usage `json:",omitzero"`
}

// StartChild asks the caller to start child Child for call CallID: a
// conversation of its own at depth Depth, of agent type Agent, whose
// first prompt is Task; read-only when ReadOnly (its parent's mode is
// read-only or its definition asks for it: it never has more than the
// parent). The caller reports the child's tokens (ChildUsage), starts a
// timer of Timeout that steps ChildTimedOut, and steps ChildFinished
// when the child's turn ends. TokenBudget is what the child may use.
type StartChild struct {
	Turn        uint64
	CallID      string
	Child       string
	Agent       string
	Task        string
	ReadOnly    bool
	Depth       int
	TokenBudget int64
	Timeout     time.Duration
}

// StopChild asks the caller to cancel child CallID (its model stream,
// tools and own children) and then to step ChildFinished with what it
// has; Reason says which cap stopped it.
type StopChild struct {
	Turn   uint64
	CallID string
	Reason string
}

func (SpawnRequested) isEvent() {}
func (ChildUsage) isEvent()     {}
func (ChildTimedOut) isEvent()  {}
func (ChildStopAsked) isEvent() {}
func (ChildFinished) isEvent()  {}
func (StartChild) isAction()    {}
func (StopChild) isAction()     {}

// child is a running child of the current batch.
type child struct {
	tokens int64
	// stopped is why the machine stopped it, "" while it runs.
	stopped string
}

// brood is a conversation's subagents: the children running in the
// current batch and what the turn's children took. It applies the caps;
// the machine turns its answers into actions.
type brood struct {
	// running are the running children of the batch, by call id.
	running map[string]*child
	// started counts the children started this turn, tokens their
	// tokens.
	started int
	tokens  int64
	// ids are the child ids given this turn: a model may reuse a call
	// id in a later response of the turn, and each child still gets an
	// id of its own (childID). Turns only grow, so a new turn's ids
	// never meet an earlier turn's.
	ids map[string]bool
}

// newTurn forgets the last turn's counts.
func (b *brood) newTurn() { b.started, b.tokens = 0, 0; clear(b.ids) }

// childID gives the id of the child started now for call callID of
// turn turn: ChildID(turn, callID), or when the turn gave that id
// already (the call id was reused), the same with ".2", ".3", … — the
// first not given. It depends only on the events stepped, so replaying
// the journal gives the same ids.
func (b *brood) childID(turn uint64, callID string) string {
	if b.ids == nil {
		b.ids = map[string]bool{}
	}
	id := ChildID(turn, callID)
	for n := 2; b.ids[id]; n++ {
		id = fmt.Sprintf("%s.%d", ChildID(turn, callID), n)
	}
	b.ids[id] = true
	return id
}

// endBatch forgets the batch's children.
func (b *brood) endBatch() { clear(b.running) }

// has reports whether a child runs for call callID.
func (b *brood) has(callID string) bool {
	_, ok := b.running[callID]
	return ok
}

// refusal says why a spawn at depth depth for task may not start now
// under caps, "" when it may.
func (b *brood) refusal(caps SpawnCaps, depth int, task string) string {
	switch {
	case caps.MaxDepth < 0 || depth >= caps.MaxDepth:
		if depth > 0 {
			return fmt.Sprintf("a subagent cannot start subagents (depth cap %d); do the task yourself", max(caps.MaxDepth, 0))
		}
		return "subagents are off here (depth cap 0); do the task yourself"
	case strings.TrimSpace(task) == "":
		return "the task is empty: say what the subagent must do"
	case len(b.running) >= caps.MaxRunning:
		return fmt.Sprintf("%d subagents already run, the cap at once; wait for their results or do it yourself", len(b.running))
	case b.started >= caps.MaxPerTurn:
		return fmt.Sprintf("%d subagents were started this turn, the cap per turn; do the rest yourself", b.started)
	case b.tokens >= caps.MaxTokensPerTurn:
		return fmt.Sprintf("the subagents used %d tokens this turn, the cap per turn (%d); do the rest yourself", b.tokens, caps.MaxTokensPerTurn)
	}
	return ""
}

// start records a child started for call callID and returns its token
// budget: its own cap, or what the turn has left when that is less.
func (b *brood) start(caps SpawnCaps, callID string) (budget int64) {
	if b.running == nil {
		b.running = map[string]*child{}
	}
	b.running[callID] = &child{}
	b.started++
	return min(caps.MaxTokensPerChild, caps.MaxTokensPerTurn-b.tokens)
}

// count records the running sum of child callID's tokens, and says why
// to stop it when it went past its budget or the turn's ("" to go on).
func (b *brood) count(caps SpawnCaps, callID string, tokens int64) (stop string) {
	c := b.running[callID]
	if tokens > c.tokens {
		b.tokens += tokens - c.tokens
		c.tokens = tokens
	}
	switch {
	case c.stopped != "":
		return ""
	case c.tokens > caps.MaxTokensPerChild:
		c.stopped = fmt.Sprintf("it used %d tokens, over the cap of %d per subagent", c.tokens, caps.MaxTokensPerChild)
	case b.tokens > caps.MaxTokensPerTurn:
		c.stopped = fmt.Sprintf("the subagents used %d tokens this turn, over the cap of %d per turn", b.tokens, caps.MaxTokensPerTurn)
	}
	return c.stopped
}

// timedOut says why to stop child callID, past its wall time; "" when it
// was stopped already.
func (b *brood) timedOut(caps SpawnCaps, callID string) (stop string) {
	c := b.running[callID]
	if c.stopped != "" {
		return ""
	}
	c.stopped = fmt.Sprintf("it ran for %s, the cap per subagent", caps.MaxWallTime)
	return c.stopped
}

// stopAsked says why to stop child callID, which the user asked to
// stop; "" when it was stopped already.
func (b *brood) stopAsked(callID string) (stop string) {
	c := b.running[callID]
	if c.stopped != "" {
		return ""
	}
	c.stopped = "the user stopped it"
	return c.stopped
}

// finish forgets child e.CallID and returns the call's result: the
// child's answer bounded, said as a tool error when it failed or was
// stopped.
func (b *brood) finish(caps SpawnCaps, e ChildFinished) (result string, isError bool) {
	c := b.running[e.CallID]
	delete(b.running, e.CallID)
	if t := e.Usage.TotalTokens; t > c.tokens {
		b.tokens += t - c.tokens
	}
	result = boundAnswer(e.Result, caps.MaxResultBytes)
	switch {
	case c.stopped != "":
		if strings.TrimSpace(result) == "" {
			result = "(no answer yet)"
		}
		return "tool error: " + AgentTool + ": the subagent was stopped: " + c.stopped + ". What it had:\n" + result, true
	case e.Failed && !strings.HasPrefix(result, "tool error:"):
		return "tool error: " + AgentTool + ": the subagent failed: " + result, true
	}
	return result, e.Failed
}

// boundAnswer cuts a child's answer at limit bytes (on a rune boundary),
// saying so.
func boundAnswer(answer string, limit int) string {
	if len(answer) <= limit {
		return answer
	}
	cut := limit
	for cut > 0 && !startsRune(answer[cut]) {
		cut--
	}
	return answer[:cut] + fmt.Sprintf("\n[… the subagent's answer is cut at %d of %d bytes; its whole transcript is in its journal]", cut, len(answer))
}

// ChildID is the id of the first child started for call callID of turn
// turn; a later child for a reused call id of the same turn gets a
// suffix (StartChild.Child is the id given).
func ChildID(turn uint64, callID string) string {
	return fmt.Sprintf("%d-%s", turn, callID)
}

// checkChild validates an event about call callID's child: wantChild
// says whether one must run (or must not, to spawn one).
func (m *Machine) checkChild(ev Event, turn uint64, callID string, wantChild bool) error {
	if err := m.checkTool(ev, turn, callID); err != nil {
		return err
	}
	x := m.execs[m.execByID[callID]]
	if x.Call.Name != AgentTool {
		return m.invalid(ev, "the call is not an "+AgentTool+" call")
	}
	if m.children.has(callID) != wantChild {
		if wantChild {
			return m.invalid(ev, "no child runs for this call")
		}
		return m.invalid(ev, "a child already runs for this call")
	}
	return nil
}

// applyChild performs an event about a subagent: a spawn starts a child,
// or refuses the call when a cap is reached; usage and time past a
// budget stop it; its end completes the call with its answer and rolls
// its usage up into the turn's and the conversation's.
func (m *Machine) applyChild(ev Event) []Action {
	caps := m.cfg.Subagents.withDefaults()
	stop := func(callID, why string) []Action {
		if why == "" {
			return nil
		}
		return []Action{StopChild{Turn: m.turn, CallID: callID, Reason: why}}
	}
	switch e := ev.(type) {
	case SpawnRequested:
		if why := m.children.refusal(caps, m.cfg.Depth, e.Task); why != "" {
			return m.onToolCompleted(ToolCompleted{Turn: e.Turn, CallID: e.CallID, IsError: true, Result: "tool error: " + AgentTool + ": " + why})
		}
		budget := m.children.start(caps, e.CallID)
		m.execs[m.execByID[e.CallID]].Status = ExecRunning
		id := m.children.childID(m.turn, e.CallID)
		return []Action{
			StartChild{Turn: m.turn, CallID: e.CallID, Child: id, Agent: e.Agent, Task: e.Task, ReadOnly: e.ReadOnly || m.Mode().ReadOnly(),
				Depth: m.cfg.Depth + 1, TokenBudget: budget, Timeout: caps.MaxWallTime},
			DisplayToolCall{Turn: m.turn, CallID: e.CallID, Name: AgentTool, Status: ToolRunning, Detail: "started " + e.Agent + " " + id},
		}
	case ChildUsage:
		return stop(e.CallID, m.children.count(caps, e.CallID, e.Tokens))
	case ChildTimedOut:
		return stop(e.CallID, m.children.timedOut(caps, e.CallID))
	case ChildStopAsked:
		return stop(e.CallID, m.children.stopAsked(e.CallID))
	case ChildFinished:
		result, isError := m.children.finish(caps, e)
		m.turnUsage = m.turnUsage.add(e.Usage)
		m.totalUsage = m.totalUsage.add(e.Usage)
		return m.onToolCompleted(ToolCompleted{Turn: e.Turn, CallID: e.CallID, Result: result, IsError: isError})
	}
	return nil
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// Children reports the calls whose children run now, and the turn's
// children count and tokens.
func (m *Machine) Children() (running []string, started int, tokens int64) {
	for _, x := range m.execs {
		if m.children.has(x.Call.ID) {
			running = append(running, x.Call.ID)
		}
	}
	return running, m.children.started, m.children.tokens
}

// Describe implements [Event].
func (e SpawnRequested) Describe() string {
	ro := ""
	if e.ReadOnly {
		ro = " read-only"
	}
	return fmt.Sprintf("SpawnRequested turn=%d call=%s agent=%s%s task=%s", e.Turn, e.CallID, e.Agent, ro, quote(e.Task))
}

// Describe implements [Event].
func (e ChildUsage) Describe() string {
	return fmt.Sprintf("ChildUsage turn=%d call=%s tokens=%d", e.Turn, e.CallID, e.Tokens)
}

// Describe implements [Event].
func (e ChildTimedOut) Describe() string {
	return fmt.Sprintf("ChildTimedOut turn=%d call=%s", e.Turn, e.CallID)
}

// Describe implements [Event].
func (e ChildStopAsked) Describe() string {
	return fmt.Sprintf("ChildStopAsked turn=%d call=%s", e.Turn, e.CallID)
}

// Describe implements [Event].
func (e ChildFinished) Describe() string {
	f := ""
	if e.Failed {
		f = " failed"
	}
	return fmt.Sprintf("ChildFinished turn=%d call=%s%s tokens=%d result=%s", e.Turn, e.CallID, f, e.Usage.TotalTokens, quote(e.Result))
}

// Describe implements [Action].
func (a StartChild) Describe() string {
	ro := ""
	if a.ReadOnly {
		ro = " read-only"
	}
	return fmt.Sprintf("StartChild turn=%d call=%s child=%s agent=%s%s depth=%d tokens=%d timeout=%s task=%s", a.Turn, a.CallID, a.Child, a.Agent, ro, a.Depth, a.TokenBudget, a.Timeout, quote(a.Task))
}

// Describe implements [Action].
func (a StopChild) Describe() string {
	return fmt.Sprintf("StopChild turn=%d call=%s reason=%s", a.Turn, a.CallID, quote(a.Reason))
}
