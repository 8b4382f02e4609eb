package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/tools/fetch"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// editSettleTimeout bounds the wait for the editor's didChange after it
// applied one of our edits.
const editSettleTimeout = 2 * time.Second

// maxEditAttempts bounds how often an edit the editor refused (the user
// typed meanwhile) is rebased and sent again.
const maxEditAttempts = 3

// toolOutput is what a finished call shows besides its summary.
type toolOutput struct {
	text     string
	exitCode *int
}

// batchRun is what a tool batch's ports (callRun) need of the session,
// copied on the owner goroutine when the batch starts: a configuration
// reload during the batch does not race with it.
type batchRun struct {
	turn uint64
	env  tools.Env
	// registry is the session's tools when the batch started (MCP tools
	// come and go).
	registry *tools.Registry
	// bash is tools.bash when the batch started; the batch's policy
	// (toolcall.Batch.Policy) decides with it.
	bash config.Policy
	// approvalTimeout bounds the wait for the user's answer.
	approvalTimeout time.Duration
	// review proposes edits instead of applying them (tools.edits);
	// together proposes the edits of the batch together (ReviewPanel).
	review, together bool
	// diag tells the model the problems the batch's edits introduced;
	// nil when no diagnostics apply (diagnose.go).
	diag *diagBatch
	// readOnly: the conversation is in a read-only mode, and the batch's
	// commands run with the workspace read-only (plancommands.go).
	readOnly bool
	// policy is the batch's policy (toolcall.Batch.Policy): a child
	// started by the batch's agent call is never given more.
	policy toolcall.Policy
}

// callRun serves the ports of a batch's calls (toolcall.Ports) for the
// conversation s: what the stages do outside the batch, each on the
// worker goroutine that runs the call, reaching the conversation's
// machine only through its inbox.
type callRun struct {
	s *Conversation
	b *batchRun
}

// newBatch makes the batch of a (on the owner goroutine): what the
// calls need of the conversation is copied now, so that a configuration
// reload during the batch does not race with it.
func (s *Conversation) newBatch(a fsm.ExecuteTools) *toolcall.Batch {
	b := &batchRun{turn: a.Turn, env: s.env, approvalTimeout: s.cfg.Tools.ApprovalTimeout.Duration,
		registry: s.registry, review: a.Review, diag: newDiagBatch(&s.settings, a, s.folder.dir, func() diagnostics.Source {
			return diagSource(s.folder.host.opts.Editor, s.caller(""), s.langServers, &s.folder.editorDiagsUnsupported)
		})}
	if rp, ok := s.folder.host.opts.Editor.(ReviewPanel); ok && a.Review {
		b.together = rp.ReviewsTogether()
	}
	policy := toolcall.Policy{Root: s.folder.dir, Mode: s.m.Mode(), Bash: s.cfg.Tools.Bash, Fetch: s.cfg.Tools.Fetch, MCP: s.mcpPolicies, Trusted: s.cfg.Trusted(),
		Sandboxed: s.env.Sandbox.Active(), NoSandbox: s.env.Sandbox.Unavailable()}
	if a.ReadOnly || s.children.up != nil && s.children.up.policy.ReadOnly {
		readOnlyBatch(b)
		policy.ReadOnly, policy.Sandboxed, policy.NoSandbox = true, b.env.Sandbox.Active(), b.env.Sandbox.Unavailable()
	}
	policy = s.children.policy(policy)
	b.bash, b.policy = policy.Bash, policy
	r := callRun{s: s, b: b}
	return &toolcall.Batch{Turn: a.Turn, Calls: a.Calls, Mutating: a.Mutating, Specs: s.toolSpecs(), Policy: policy, Together: b.together,
		Ports: toolcall.Ports{Hooks: r, Approver: r, Stepper: r, Runner: r, Reviewer: r, Diagnostics: r}}
}

// Tool says whether the batch's registry has the tool, and its MCP
// server.
func (r callRun) Tool(name string) (known bool, server string) {
	tool, ok := r.b.registry.Get(name)
	if !ok {
		return false, ""
	}
	if t, isMCP := tool.(*mcp.Tool); isMCP {
		return true, t.Server()
	}
	return true, ""
}

// FetchHosts reads the hosts the user allowed the fetch tool for good
// in the folder, as they are now.
func (r callRun) FetchHosts() []string {
	f := r.s.folder
	hosts, err := f.host.Rules().FetchHosts(f.dir)
	if err != nil {
		f.log.Warn("approval rules unreadable; asking", "err", err)
	}
	return hosts
}

// Rules reads the folder's approval rules (a command's) or its allowed
// MCP servers as they are now: an answer earlier in the batch may have
// added one.
func (r callRun) Rules(c fsm.ToolCall, bash bool) (rules []cmdrules.Rule, servers []string) {
	f := r.s.folder
	var err error
	if bash {
		rules, err = f.host.Rules().Commands(f.dir)
	} else {
		servers, err = f.host.Rules().MCPServers(f.dir)
	}
	if err != nil {
		f.log.Warn("approval rules unreadable; asking", "err", err)
	}
	return rules, servers
}

// Complete records what call c produced and steps its PostToolUse
// reports and its ToolCompleted, on the owner goroutine, unless the
// turn is gone by then.
func (r callRun) Complete(ctx context.Context, turn uint64, c fsm.ToolCall, out toolcall.Outcome, post []fsm.HookReport) {
	s := r.s
	s.loop.postLive(ctx, func() {
		if len(post) > 0 {
			s.step(fsm.HooksDecided{Turn: turn, Event: fsm.HookPostToolUse, CallID: c.ID, Hooks: post})
		}
		if d := out.Diagnosed; d != nil {
			s.out.notify(Notification{Kind: NoteDiagnostics, Turn: turn, Diagnostics: &DiagnosticsNote{CallID: c.ID, Summary: d.Summary, New: d.New}})
		}
		if e := out.Applied; e != nil {
			s.git.recordEdit(e.Path, e.OldText, e.NewText, e.Created, e.Mode)
			if e.Diff != "" {
				s.cards.diffs[c.ID] = e.Diff
			}
			s.cards.edits[c.ID] = &EditNote{Path: e.Path, OldText: e.OldText, NewText: e.NewText, Created: e.Created}
		}
		if run, ok := out.Command.(*commandRun); ok && run != nil {
			s.git.cmds = append(s.git.cmds, *run)
		}
		if out.Summary != "" {
			s.cards.summaries[c.ID] = out.Summary
		}
		s.cards.outputs[c.ID] = toolOutput{text: out.Result, exitCode: out.ExitCode}
		s.step(fsm.ToolCompleted{Turn: turn, CallID: c.ID, Result: out.Result, IsError: out.IsError, Read: s.fresh.freshlyRead(c, out.IsError)})
	})
}

// Review proposes what c computed under review: an edit (the batch
// waits where it needs the decision), or a command's changes (waited
// for here).
func (r callRun) Review(ctx context.Context, turn uint64, c fsm.ToolCall, out toolcall.Outcome) (*changes.Proposal, bool) {
	s := r.s
	if out.Propose != nil {
		// The card shows the decision, not the tool's own summary.
		return r.proposeLive(ctx, func() *changes.Proposal { return s.review.Propose(turn, c.ID, out.Propose) }), true
	}
	run, _ := out.Command.(*commandRun)
	if !r.b.review || run == nil {
		return nil, false
	}
	// A command's changes join the review (review.go).
	cr := r.commandProposal(ctx, run, out.Result)
	if cr == nil {
		return nil, false
	}
	r.awaitReview(ctx, func() *changes.Proposal {
		if out.Summary != "" {
			s.cards.summaries[c.ID] = out.Summary
		}
		return r.proposeCommand(turn, c.ID, run, cr)
	})
	return nil, true
}

// Settle waits until the proposals are decided, or the turn is gone.
func (r callRun) Settle(ctx context.Context, ps []*changes.Proposal) {
	r.s.review.AwaitSettled(ctx, ps)
}

// Prime warms loom's own language server for the batch's files.
func (r callRun) Prime(calls []fsm.ToolCall) { r.b.diag.prime(&r.b.env, calls) }

// BeforeEdit records the problems of the file c is about to edit.
func (r callRun) BeforeEdit(ctx context.Context, c fsm.ToolCall) {
	r.b.diag.beforeEdit(ctx, r.b.env.FileSource(), c)
}

// AfterCall notes an applied edit and reports, on the batch's last edit
// call, the problems the batch's edits introduced.
func (r callRun) AfterCall(ctx context.Context, c fsm.ToolCall, out toolcall.Outcome) (string, *toolcall.Diagnosed) {
	return r.b.diag.afterCall(ctx, c, out, func(p string) string { return relTo(r.s.folder.dir, p) })
}

// Running steps the call's "running" progress on the owner goroutine
// and waits until it is taken, so that what the editor is told of the
// call (running) goes out before anything the call itself asks of the
// editor. It reports false when the turn is gone (cancelled, or the
// conversation closed).
func (r callRun) Running(ctx context.Context, turn uint64, callID string) bool {
	s := r.s
	taken := make(chan bool, 1)
	s.loop.post(func() {
		if ctx.Err() != nil {
			taken <- false
			return
		}
		if _, err := s.step(fsm.ToolProgress{Turn: turn, CallID: callID, Message: "running"}); err != nil {
			// Not expected while the batch is live; the call still runs
			// and completes, so that the turn can end.
			s.folder.log.Warn("the machine refused a call's progress", "call", callID, "err", err)
		}
		taken <- true
	})
	select {
	case ok := <-taken:
		return ok
	case <-ctx.Done():
		return false
	case <-s.loop.done:
		return false
	}
}

// Approved steps the user's decision on the owner goroutine and reports
// whether the machine took it. A decision for a turn cancelled
// meanwhile is dropped: it is not taken.
func (r callRun) Approved(ctx context.Context, ev fsm.ApprovalDecided) bool {
	return r.stepTaken(ctx, ev)
}

// Run runs the call the policy admitted (execute), holding the folder's
// worktree lock when writeLock is set (a mutating call). An undo in
// progress finishes first (Conversation.Undo).
func (r callRun) Run(ctx context.Context, c fsm.ToolCall, writeLock bool) toolcall.Outcome {
	return r.executeLocked(ctx, c, writeLock, false)
}

// executeLocked runs execute holding the folder's worktree lock when
// writeLock is set; unsandboxed runs a command outside the sandbox.
func (r callRun) executeLocked(ctx context.Context, c fsm.ToolCall, writeLock, unsandboxed bool) toolcall.Outcome {
	s := r.s
	if writeLock {
		s.git.lock.Lock()
		defer s.git.lock.Unlock()
	}
	return r.execute(ctx, c, unsandboxed)
}

// execute runs the tool the user (or the policy) admitted, and applies
// the edit it computed. unsandboxed runs a command outside the sandbox
// (the user approved it after the sandbox blocked it). A command the
// sandbox blocked under tools.bash = "ask" comes back with escalate set.
func (r callRun) execute(ctx context.Context, c fsm.ToolCall, unsandboxed bool) (outcome toolcall.Outcome) {
	s, b := r.s, r.b
	tool, ok := b.registry.Get(c.Name)
	if !ok {
		return toolcall.Outcome{Result: fmt.Sprintf("tool error: unknown tool %q", c.Name), IsError: true}
	}
	if c.Name == fsm.AgentTool {
		return r.spawn(ctx, c) // its run is a child conversation (subagents.go)
	}
	if c.Name == "bash" && !b.readOnly {
		// The files the command changes: those the watcher sees change
		// until it ends, less those the editor reports meanwhile.
		// And the files as they were before it, so that its changes (not
		// the user's earlier ones) can be told apart (preimage.go).
		before := s.folder.cmds.preImages(func() []string { return s.folder.commands().dirty(ctx, b.env.ScrubEnv) })
		present, started := protectedPresence(s.folder.dir), time.Now()
		mark, win := s.folder.host.overlay.EditorMark(), s.folder.cmds.openWindow()
		s.writes.commandStarted()
		defer func() {
			run := s.folder.commands().close(win, mark, commandLine(c.Arguments), before)
			outcome.Command = run
			s.writes.commandEnded(run.paths, s.folder.host.overlay.readSeen)
			heldModel, heldRels := r.holdCreated(run, present, started)
			holdWrittenConfig(s.folder.host.opts.TrustFile, s.folder.dir, heldRels, s.folder.log)
			written := protectedWrites(s.folder.dir, run)
			holdWrittenConfig(s.folder.host.opts.TrustFile, s.folder.dir, written, s.folder.log)
			user, model := protectedWords(s.folder.dir, run.command, written)
			if user != "" {
				s.loop.post(func() { s.out.notify(Notification{Kind: NoteInfo, Turn: b.turn, Text: user, Visible: true}) })
			}
			if !outcome.Settled {
				outcome.Result += s.folder.commands().resultNote(ctx, run) + heldModel + model
			}
		}()
	}
	env := b.env
	if unsandboxed {
		env.Sandbox = nil
	}
	if readsOneFile[c.Name] {
		env.Files = r.documentSource(ctx, c.ID, env.Files)
	}
	env.Progress = func(msg string) {
		s.loop.postEventLive(ctx, fsm.ToolProgress{Turn: b.turn, CallID: c.ID, Message: msg})
	}
	env.Elicit = func(ctx context.Context, req elicit.Request) (elicit.Result, error) {
		// An MCP server's question mid-call (elicit.go); no answer within
		// the approval timeout cancels it.
		return s.elicits.ask(ctx, b.turn, c, req, b.approvalTimeout)
	}
	res, err := tool.Run(ctx, &env, json.RawMessage(c.Arguments))
	if err == nil && res.Blocked != "" && b.bash == config.PolicyAsk && env.Sandbox != nil && !b.readOnly {
		return toolcall.Outcome{Result: res.Text, IsError: res.IsError, Summary: res.Summary, ExitCode: res.ExitCode, Escalate: &res}
	}
	if err != nil {
		if ctx.Err() != nil {
			return toolcall.Outcome{Result: "tool error: cancelled", IsError: true}
		}
		s.folder.log.Error("tool failed", "tool", c.Name, "err", err)
		return toolcall.Outcome{Result: "tool error: " + err.Error(), IsError: true}
	}
	out := toolcall.Outcome{Result: res.Text, IsError: res.IsError, Summary: res.Summary, ExitCode: res.ExitCode}
	if res.Edit != nil && !res.IsError && b.review && res.Edit.OldText != res.Edit.NewText {
		out.Propose = res.Edit
		return out
	}
	if res.Edit != nil && !res.IsError {
		if err := r.applyEdit(ctx, c.ID, res.Edit); err != nil {
			return toolcall.Outcome{Result: "tool error: " + err.Error(), IsError: true}
		}
		out.Applied = res.Edit
	}
	return out
}

// AskCommand asks the user whether a command may run (the policy said
// Ask: tools.bash = "ask" and no approval rule covers it). It returns
// "" when the command may run, else the tool result that explains why
// not. The decision is an event of the machine (fsm.ApprovalDecided):
// the command runs only once the machine took an approval; settled
// reports that the machine completed the call itself (denied), or that
// the turn is gone, so that nothing more must be reported for it;
// approved that the machine took an approval (the call is running).
// from is the model's own arguments when a PreToolUse hook rewrote the
// call (c is what runs): the user is told so.
func (r callRun) AskCommand(ctx context.Context, turn uint64, c fsm.ToolCall, d toolcall.Decision, from string) (refusal string, settled, approved bool) {
	s, b := r.s, r.b
	if c.Name == fetch.Name {
		return r.askFetch(ctx, turn, c, d.Host, b.approvalTimeout)
	}
	decide := func(ok bool, why string) (string, bool, bool) {
		if !r.Approved(ctx, fsm.ApprovalDecided{Turn: turn, CallID: c.ID, Approved: ok, Why: why}) || !ok {
			return "", true, false
		}
		return "", false, true
	}
	a := Approval{Folder: s.folder.dir, Turn: b.turn, Tool: c.Name, CallID: c.ID, Detail: d.Command, Rewritten: inputWordsOf(from)}
	a.Exact, a.Prefix = d.Exact, d.Prefix
	if a.Exact != nil {
		a.Remember = func(rule cmdrules.Rule) error { return r.rememberRule(b.turn, rule) }
	}
	ok, err := s.out.approve(ctx, a, b.approvalTimeout)
	switch {
	case errors.Is(err, ErrUnsupported):
		why := noAskWords
		if ca := (*CannotAskError)(nil); errors.As(err, &ca) && ca.Why != "" {
			why = ca.Why
		}
		r.notifyFromWorker(Notification{Kind: NoteError, Turn: b.turn, Text: NotRunWords + oneLine(d.Command) + "`: " + why + "."})
		return decide(false, why)
	case errors.Is(err, errApprovalTimeout):
		why := fmt.Sprintf("no answer within %s (tools.approval_timeout)", b.approvalTimeout)
		r.notifyFromWorker(Notification{Kind: NoteError, Turn: b.turn, Text: "Loom did not run `" + oneLine(d.Command) + "`: " + why + "."})
		return decide(false, why)
	case err != nil:
		if ctx.Err() != nil {
			return "", true, false
		}
		return "tool error: could not ask the user to approve the command: " + err.Error(), false, false
	}
	return decide(ok, "")
}

// NotRunWords starts the notice of a command refused because no one
// could approve it (NoteError): a front end whose tool line says the same
// may leave it out.
const NotRunWords = "Loom did not run `"

// noAskWords says why a client that cannot ask gets commands denied, and
// how to allow them.
const noAskWords = `commands need the user's approval (tools.bash = "ask") and this editor cannot ask; ` +
	`set tools.bash = "allow" in loom.toml to let the agent run commands, or use a client that can ask (VS Code, Neovim, an ACP client)`

// rememberRule saves a rule the user picked in an approval and tells so.
func (r callRun) rememberRule(turn uint64, rule cmdrules.Rule) error {
	s := r.s
	saved, err := s.folder.host.Rules().AddCommand(s.folder.dir, rule)
	if err != nil {
		r.notifyFromWorker(Notification{Kind: NoteError, Turn: turn, Text: "Loom allowed the command once, but did not save the rule: " + err.Error()})
		return err
	}
	r.notifyFromWorker(Notification{Kind: NoteInfo, Turn: turn, Text: "Loom now runs " + saved.String() + " without asking in this folder (loom.removeRule undoes it)."})
	return nil
}

// notifyFromWorker sends n from a tool worker, through the owner
// goroutine.
func (r callRun) notifyFromWorker(n Notification) {
	r.s.loop.post(func() { r.s.out.notify(n) })
}

// oneLine shortens a command for a one-line message.
func oneLine(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if len(cmd) > 120 {
		cmd = cmd[:117] + "…"
	}
	return cmd
}

// stepTaken steps ev on the owner goroutine, from a batch's goroutine,
// and reports whether the machine took it: false when ctx ended first
// (the turn was cancelled) or the conversation closed.
func (r callRun) stepTaken(ctx context.Context, ev fsm.Event) bool {
	s := r.s
	taken := make(chan bool, 1)
	s.loop.post(func() {
		if ctx.Err() != nil {
			taken <- false
			return
		}
		_, err := s.step(ev)
		taken <- err == nil
	})
	select {
	case ok := <-taken:
		return ok
	case <-ctx.Done():
		return false
	case <-s.loop.done:
		return false
	}
}
