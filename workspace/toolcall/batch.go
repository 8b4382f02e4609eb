package toolcall

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
)

// Batch is the tool calls of one model response (fsm.ExecuteTools), run
// by Run: consecutive read-only calls in parallel, each mutating call
// alone, in request order; each call through its stages (Call.run).
// The Batch holds values only: the policy and the specs copied when the
// batch started, and the ports through which its stages act.
type Batch struct {
	// Turn is the turn the batch belongs to.
	Turn uint64
	// Calls are the calls, Mutating[i] whether Calls[i]'s tool may
	// change the workspace.
	Calls    []fsm.ToolCall
	Mutating []bool
	// Specs are the tools' specs as the machine was given them.
	Specs map[string]fsm.ToolSpec
	// Policy decides each call (Decide); the approval rules in it are
	// read afresh for each call (Approver.Rules).
	Policy Policy
	// Together proposes the edits of a batch under review together (a
	// client that shows proposals side by side): an edit proposes its
	// change and the next edit runs at once.
	Together bool
	// Ports are how the stages act.
	Ports Ports
}

// Ports are what the stages of a call do outside the batch, each a
// narrow interface; a conversation may serve them all with one value.
type Ports struct {
	Hooks       Hooks
	Approver    Approver
	Stepper     Stepper
	Runner      Runner
	Reviewer    Reviewer
	Diagnostics Diagnostics
}

// Hooked is a call as its PreToolUse hooks left it.
type Hooked struct {
	// Call is what runs: the model's call, or with the arguments a hook
	// rewrote it to; From is then the model's own arguments.
	Call fsm.ToolCall
	From string
	// Done reports that the call must not run (denied by a hook, or by
	// the user a hook asked, or the turn is gone); Asked that the user
	// approved it at a hook's request (the machine has it running).
	Done, Asked bool
}

// Outcome is what one call produced, for the stages after it ran.
type Outcome struct {
	// Result is what the model reads; IsError marks a tool error.
	Result  string
	IsError bool
	// Summary is the tool's one-line summary, for display.
	Summary string
	// Settled is set when the machine already completed the call (the
	// user denied it, or the turn is gone): nothing more is reported.
	Settled bool
	// ExitCode is a command's exit status, nil for the other tools.
	ExitCode *int
	// Applied is the edit the call applied to a file, nil when none.
	Applied *tools.Edit
	// Propose is an edit computed under review, not applied: it becomes
	// a proposal.
	Propose *tools.Edit
	// Escalate is the result of a command the sandbox blocked, under
	// tools.bash = "ask": the user may have it run outside.
	Escalate *tools.Result
	// Command is what the runner recorded of a command (the files it
	// changed), nil for the other tools: the batch hands it back to the
	// ports and never reads it.
	Command any
	// Diagnosed is the report of the problems the batch's edits
	// introduced, on the call that carries it; nil on the others.
	Diagnosed *Diagnosed
}

// Diagnosed is what a batch's edits did to their files' problems.
type Diagnosed struct {
	// Summary is one line for people ("1 new problem in main.go").
	Summary string
	// New are the problems the edits introduced.
	New []diagnostics.Diagnostic
}

// Hooks runs the agent hooks around a call.
type Hooks interface {
	// PreToolUse runs the PreToolUse hooks of c and steps what they
	// said (and what the user answered if one asked).
	PreToolUse(ctx context.Context, turn uint64, c fsm.ToolCall) Hooked
	// PostToolUse runs the PostToolUse hooks of c, which produced out;
	// their reports are stepped with the call's completion.
	PostToolUse(ctx context.Context, c fsm.ToolCall, out Outcome) []fsm.HookReport
}

// Approver reads the user's standing approvals and asks the user.
type Approver interface {
	// Tool says whether the registry has the tool name, and its MCP
	// server ("" for a built-in tool).
	Tool(name string) (known bool, server string)
	// Rules are the folder's approval rules (for a command) and the MCP
	// servers the user allowed (for another call), as they are now.
	Rules(c fsm.ToolCall, bash bool) (rules []cmdrules.Rule, servers []string)
	// AskCommand asks whether command c may run (Decide said Ask):
	// refusal is the result when it may not; settled that the machine
	// completed the call itself; approved that it took an approval.
	AskCommand(ctx context.Context, turn uint64, c fsm.ToolCall, d Decision, from string) (refusal string, settled, approved bool)
	// AskServer asks whether an MCP tool may be called: the refusal's
	// result, "" when it may.
	AskServer(ctx context.Context, turn uint64, c fsm.ToolCall) (refusal string)
}

// Stepper steps a call's events on the conversation's owner goroutine.
type Stepper interface {
	// Running marks the call running, and reports false when the turn
	// is gone.
	Running(ctx context.Context, turn uint64, callID string) bool
	// Approved steps an approval decision, and reports whether the
	// machine took it.
	Approved(ctx context.Context, ev fsm.ApprovalDecided) bool
	// Complete records what the call produced and steps its PostToolUse
	// reports and its ToolCompleted, unless the turn is gone.
	Complete(ctx context.Context, turn uint64, c fsm.ToolCall, out Outcome, post []fsm.HookReport)
}

// Runner runs a call the policy admitted: the tool in the sandbox, a
// command inside its command window, an edit applied through the
// editor or the one writer (or computed only, under review).
type Runner interface {
	// Run runs c; writeLock holds the folder's worktree lock while it
	// runs (a mutating call). A command the sandbox blocked under
	// tools.bash = "ask" comes back with Escalate set.
	Run(ctx context.Context, c fsm.ToolCall, writeLock bool) Outcome
	// Escalate offers to rerun outside the sandbox a command it blocked.
	Escalate(ctx context.Context, c fsm.ToolCall, out Outcome, writeLock bool) Outcome
}

// Reviewer proposes what a call computed under review.
type Reviewer interface {
	// Review proposes an edit computed under review (out.Propose), or a
	// command's changes under review: handled reports that it did (the
	// call completes with the user's decision, not here), p the proposal
	// that the batch must wait for, nil when it waited already.
	Review(ctx context.Context, turn uint64, c fsm.ToolCall, out Outcome) (p *changes.Proposal, handled bool)
	// Settle waits until the proposals are decided, or the turn is gone.
	Settle(ctx context.Context, ps []*changes.Proposal)
}

// Diagnostics tells the model the problems the batch's edits introduced.
type Diagnostics interface {
	// Prime warms the language servers for the batch's files.
	Prime(calls []fsm.ToolCall)
	// BeforeEdit records the problems of the file c is about to edit.
	BeforeEdit(ctx context.Context, c fsm.ToolCall)
	// AfterCall notes an applied edit and returns, on the batch's last
	// edit call, the report the model reads ("" for none) and the one
	// shown to people.
	AfterCall(ctx context.Context, c fsm.ToolCall, out Outcome) (report string, shown *Diagnosed)
}

// Run runs the batch in call order: consecutive read-only calls run in
// parallel, and each mutating call runs alone, after everything before
// it.
//
// Under review with Together, an edit proposes its change and the next
// edit runs at once, so that the user sees every file of the response
// and decides them in any order. What could depend on an undecided edit
// waits for the decisions first: an edit of a file already proposed, a
// command, any other mutating tool, and reads.
func (b *Batch) Run(ctx context.Context) {
	b.Ports.Diagnostics.Prime(b.Calls)
	var undecided []*changes.Proposal
	settle := func() {
		b.Ports.Reviewer.Settle(ctx, undecided)
		undecided = nil
	}
	for i := 0; i < len(b.Calls); {
		if b.Mutating[i] {
			// The PreToolUse hooks first: what waits for the decisions
			// depends on the call as it runs (a hook may rewrite its path).
			hc := b.Ports.Hooks.PreToolUse(ctx, b.Turn, b.Calls[i])
			if name, ok := editTarget(hc.Call); !b.Together || !ok || slices.ContainsFunc(undecided, func(p *changes.Proposal) bool { return sameFileName(p.Path(), name) }) {
				settle()
			}
			if p := b.run(ctx, hc, true); p != nil {
				undecided = append(undecided, p)
			}
			if !b.Together {
				settle()
			}
			i++
			continue
		}
		settle()
		j := i
		for j < len(b.Calls) && !b.Mutating[j] {
			j++
		}
		var wg sync.WaitGroup
		for _, c := range b.Calls[i:j] {
			wg.Add(1)
			go func() { defer wg.Done(); b.run(ctx, b.Ports.Hooks.PreToolUse(ctx, b.Turn, c), false) }()
		}
		wg.Wait()
		i = j
	}
}

// run takes one call its PreToolUse hooks let through (hc.Call is what
// runs) through the stages after them, in this order: policy (admit),
// run (with the sandbox's escalation), review or apply, diagnostics,
// PostToolUse hooks, completion. What it reports after the batch was
// cancelled is dropped on the owner goroutine (Stepper), so it can
// never reach a later turn or a new conversation.
//
// An edit computed under review is proposed, and run returns its
// proposal without waiting for the decision (Run waits where the batch
// needs it); it returns nil otherwise.
func (b *Batch) run(ctx context.Context, hc Hooked, writeLock bool) *changes.Proposal {
	if ctx.Err() != nil || hc.Done {
		return nil
	}
	c := hc.Call
	out, refused := b.admit(ctx, hc)
	if !refused {
		b.Ports.Diagnostics.BeforeEdit(ctx, c)
		out = b.Ports.Runner.Run(ctx, c, writeLock)
		if out.Escalate != nil {
			// The sandbox blocked the command: the user is asked whether
			// to run it outside, without the worktree lock.
			out = b.Ports.Runner.Escalate(ctx, c, out, writeLock)
		}
	}
	if out.Settled {
		return nil
	}
	if p, handled := b.Ports.Reviewer.Review(ctx, b.Turn, c, out); handled {
		return p
	}
	if report, shown := b.Ports.Diagnostics.AfterCall(ctx, c, out); report != "" {
		out.Result = strings.TrimRight(out.Result, "\n") + "\n\n" + report + "\n"
		out.Summary += " · " + shown.Summary
		out.Diagnosed = shown
	}
	var post []fsm.HookReport
	if !refused {
		// A call refused before it ran (policy, read-only mode, unknown
		// tool) gets no PostToolUse, as in the formats: it did not run.
		post = b.Ports.Hooks.PostToolUse(ctx, c, out)
	}
	b.Ports.Stepper.Complete(ctx, b.Turn, c, out, post)
	return nil
}

// admit is the policy stage: it decides the call (Decide, over the
// batch's policy and the approval rules as they are now), asks the user
// where the decision says so, and marks the call running once it may
// run. done reports that the call will not run: out is then its outcome
// (a refusal, or settled).
func (b *Batch) admit(ctx context.Context, hc Hooked) (out Outcome, done bool) {
	c := hc.Call
	call := Call{ToolCall: c, Asked: hc.Asked, Spec: b.Specs[c.Name]}
	call.Known, call.Server = b.Ports.Approver.Tool(c.Name)
	p := b.Policy
	if bash := c.Name == "bash"; call.Known && (bash && p.bash() == config.PolicyAsk || !bash && call.Server != "" && p.mcp(call.Server) == config.PolicyAsk) {
		p.Rules, p.Servers = b.Ports.Approver.Rules(c, bash)
	}
	d := Decide(call, p)
	decided := d.Approved
	switch d.Verdict {
	case Refuse:
		return Outcome{Result: d.Why, IsError: true}, true
	case Approve:
		if !b.Ports.Stepper.Approved(ctx, fsm.ApprovalDecided{Turn: b.Turn, CallID: c.ID, Approved: true, Why: d.Why}) {
			return Outcome{Settled: true}, true
		}
		decided = true
	case Ask:
		if call.Server == "" {
			refusal, settled, approved := b.Ports.Approver.AskCommand(ctx, b.Turn, c, d, hc.From)
			if settled {
				return Outcome{Settled: true}, true
			}
			if refusal != "" {
				return Outcome{Result: refusal, IsError: true}, true
			}
			decided = approved
		} else if refusal := b.Ports.Approver.AskServer(ctx, b.Turn, c); refusal != "" {
			return Outcome{Result: refusal, IsError: true}, true
		}
	}
	if !decided && !b.Ports.Stepper.Running(ctx, b.Turn, c.ID) {
		return Outcome{Settled: true}, true
	}
	return Outcome{}, false
}

// editTarget is the path an edit call names (edit_file, write_file);
// ok is false for any other call, or arguments without a path.
func editTarget(c fsm.ToolCall) (path string, ok bool) {
	if !writeTools[c.Name] {
		return "", false
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &args) != nil || args.Path == "" {
		return "", false
	}
	return args.Path, true
}

// sameFileName reports whether a proposed file and a call's path may be
// the same file: the same base name is enough (a symlink or "a/../b"
// never hides it).
func sameFileName(proposed, path string) bool {
	return filepath.Base(proposed) == filepath.Base(filepath.Clean(path))
}
