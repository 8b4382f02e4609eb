package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
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
//
// A conversation's side of its children, and a child's of its parent,
// is its children value (children.go).

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
	s.loop.postLive(ctx, func() {
		s.children.spawning = &policy // the child StartChild starts keeps it
		defer func() { s.children.spawning = nil }()
		s.step(ev)
	})
	return toolcall.Outcome{Settled: true}
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
	// Model is the model its definition chose among the user's
	// [subagents] models; absent: the conversation's.
	Model string `json:"model,omitempty"`
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

// ChildJournal is the journal of child id of the conversation whose
// journal is at parent.
func ChildJournal(parent, id string) string {
	return filepath.Join(filepath.Dir(parent), "subagents", strings.TrimSuffix(filepath.Base(parent), ".jsonl")+"."+id+".jsonl")
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

// spawnCaps are the machine's caps on children from [subagents]; a
// hand-built configuration without them keeps the machine's defaults.
func spawnCaps(c config.Subagents) fsm.SpawnCaps {
	if c.MaxDepth == 0 && c.MaxRunning == 0 && c.MaxPerTurn == 0 && c.MaxTokens == 0 && c.MaxTurnTokens == 0 && c.Timeout.Duration == 0 {
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

// childModel is the model a child runs on when its definition asks for
// asked, given allowed, the user's [subagents] models: "" for the
// conversation's (asked is "" or "inherit", or not allowed: then why
// says so); a listed name as it is; an alias (haiku, sonnet, opus, any
// word) that exactly one listed name contains, that name. A definition
// never picks a model the user did not list.
func childModel(asked string, allowed []string) (model, why string) {
	asked = strings.TrimSpace(asked)
	if asked == "" || strings.EqualFold(asked, "inherit") {
		return "", ""
	}
	var matches []string
	for _, m := range allowed {
		if m == asked {
			return m, ""
		}
		if strings.Contains(strings.ToLower(m), strings.ToLower(asked)) {
			matches = append(matches, m)
		}
	}
	if len(matches) == 1 {
		return matches[0], ""
	}
	listed := "none are listed"
	if len(allowed) > 0 {
		listed = "they are " + strings.Join(allowed, ", ")
	}
	if len(matches) > 1 {
		return "", fmt.Sprintf("its definition asks for model %q, which names several of your [subagents] models (%s); it runs on the conversation's model", asked, strings.Join(matches, ", "))
	}
	return "", fmt.Sprintf("its definition asks for model %q, not one of your [subagents] models (%s); it runs on the conversation's model", asked, listed)
}
