package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// editSettleTimeout bounds the wait for the editor's didChange after it
// applied one of our edits.
const editSettleTimeout = 2 * time.Second

// maxEditAttempts bounds how often an edit the editor refused (the user
// typed meanwhile) is rebased and sent again.
const maxEditAttempts = 3

// toolOutcome is what one call produced, delivered to the owner goroutine.
type toolOutcome struct {
	result  string
	isError bool
	// changed is the file an applied edit changed, "" if none; before is
	// its text before the edit, created whether it did not exist.
	changed string
	before  string
	// after is the changed file's text after the edit; mode its
	// permission bits.
	after   string
	created bool
	mode    fs.FileMode
	diff    string
	// summary is the tool's one-line summary, for display.
	summary string
	// settled is set when the machine already completed the call (the
	// user denied it): no ToolCompleted must follow.
	settled bool
	// exitCode is bash's exit status, nil for the other tools.
	exitCode *int
	// command is what a bash command changed, nil for the other tools.
	command *commandRun
	// propose is the edit computed under review, not applied: it becomes
	// a proposal.
	propose *tools.Edit
	// escalate is the result of a command the sandbox blocked, under
	// tools.bash = "ask": the user may have it run outside (escalate).
	escalate *tools.Result
}

// toolOutput is what a finished call shows besides its summary.
type toolOutput struct {
	text     string
	exitCode *int
}

// batchRun is what a tool batch's workers need of the session, copied on
// the owner goroutine when the batch starts: a configuration reload during
// the batch does not race with it.
type batchRun struct {
	turn uint64
	env  tools.Env
	bash config.Policy
	// registry is the session's tools when the batch started (MCP tools
	// come and go); mcpPolicies the MCP servers' approve policies.
	registry    *tools.Registry
	mcpPolicies map[string]config.Policy
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
}

// runTools runs a batch in call order: consecutive read-only calls run in
// parallel, and each mutating call runs alone, after everything before it.
//
// Under review, in a client that shows proposals side by side
// (ReviewPanel), the edits of a batch are proposed together: an edit
// proposes its change and the next edit runs at once, so that the user
// sees every file of the response and decides them in any order. What
// could depend on an undecided edit waits for the decisions first: an
// edit of a file already proposed, a command, any other mutating tool,
// and reads.
func (s *Conversation) runTools(ctx context.Context, a fsm.ExecuteTools, b *batchRun) {
	b.diag.prime(&b.env, a.Calls)
	var undecided []*changes.Proposal
	settle := func() {
		s.review.AwaitSettled(ctx, undecided)
		undecided = nil
	}
	for i := 0; i < len(a.Calls); {
		if a.Mutating[i] {
			// The PreToolUse hooks first: what waits for the decisions
			// depends on the call as it runs (a hook may rewrite its path).
			hc := s.preToolHooks(ctx, b, a.Calls[i])
			if name, ok := editTarget(hc.call); !b.together || !ok || slices.ContainsFunc(undecided, func(p *changes.Proposal) bool { return sameFileName(p.Path(), name) }) {
				settle()
			}
			if p := s.runHooked(ctx, b, hc, true); p != nil {
				undecided = append(undecided, p)
			}
			if !b.together {
				settle()
			}
			i++
			continue
		}
		settle()
		j := i
		for j < len(a.Calls) && !a.Mutating[j] {
			j++
		}
		var wg sync.WaitGroup
		for _, c := range a.Calls[i:j] {
			wg.Add(1)
			go func() { defer wg.Done(); s.runCall(ctx, b, c, false) }()
		}
		wg.Wait()
		i = j
	}
}

// editTarget is the path an edit call names (edit_file, write_file);
// ok is false for any other call, or arguments without a path.
func editTarget(c fsm.ToolCall) (path string, ok bool) {
	if c.Name != "edit_file" && c.Name != "write_file" {
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

// runCall runs one call and reports ToolProgress and ToolCompleted. What
// it reports after the batch was cancelled is dropped on the owner
// goroutine (postLive), so it can never reach a later turn or a new
// conversation.
//
// The call stays pending while the user is asked to approve it, and
// becomes running once it may run. A mutating call (writeLock) holds the
// folder's worktree lock only while it runs, never while the user is
// asked: the folder's other conversations edit and commit meanwhile.
//
// An edit computed under review is proposed, and runCall returns its
// proposal without waiting for the decision (runTools waits where the
// batch needs it); it returns nil otherwise.
func (s *Conversation) runCall(ctx context.Context, b *batchRun, c fsm.ToolCall, writeLock bool) *changes.Proposal {
	return s.runHooked(ctx, b, s.preToolHooks(ctx, b, c), writeLock)
}

// runHooked runs a call its PreToolUse hooks let through, with the input
// they gave it: hc.call is what runs, and it goes through exactly what
// the model's call would (approval rules, tools.bash, the tools' own
// refusals, the sandbox, the review).
func (s *Conversation) runHooked(ctx context.Context, b *batchRun, hc hookedCall, writeLock bool) *changes.Proposal {
	if ctx.Err() != nil || hc.done {
		return nil
	}
	turn, c := b.turn, hc.call
	out, refused := s.admit(ctx, b, hc)
	if !refused {
		b.diag.beforeEdit(ctx, b.env.FileSource(), c)
		out = s.executeLocked(ctx, b, c, writeLock, false)
		if out.escalate != nil {
			// The sandbox blocked the command: the user is asked whether
			// to run it outside, without the worktree lock.
			out = s.escalate(ctx, b, c, out, writeLock)
		}
	}
	if out.settled {
		return nil
	}
	if out.propose != nil {
		// The card shows the decision, not the tool's own summary.
		return s.proposeLive(ctx, func() *changes.Proposal { return s.review.Propose(turn, c.ID, out.propose) })
	}
	if b.review && out.command != nil {
		// A command's changes join the review (review.go).
		if cr := s.commandProposal(ctx, b, out.command, out.result); cr != nil {
			s.awaitReview(ctx, func() *changes.Proposal {
				if out.summary != "" {
					s.summaries[c.ID] = out.summary
				}
				return s.proposeCommand(turn, c.ID, out.command, cr)
			})
			return nil
		}
	}
	report, diagNote := b.diag.afterCall(ctx, c, out, s.relPath)
	if report != "" {
		out.result = strings.TrimRight(out.result, "\n") + "\n\n" + report + "\n"
		out.summary += " · " + diagNote.Summary
	}
	var postHooks []fsm.HookReport
	if !refused {
		// A call refused before it ran (policy, read-only mode, unknown
		// tool) gets no PostToolUse, as in the formats: it did not run.
		postHooks = s.postToolHooks(ctx, c, out)
	}
	s.postLive(ctx, func() {
		if len(postHooks) > 0 {
			s.step(fsm.HooksDecided{Turn: turn, Event: fsm.HookPostToolUse, CallID: c.ID, Hooks: postHooks})
		}
		if diagNote != nil {
			s.notify(Notification{Kind: NoteDiagnostics, Turn: turn, Diagnostics: diagNote})
		}
		if out.changed != "" {
			s.git.recordEdit(out.changed, out.before, out.after, out.created, out.mode)
		}
		if out.command != nil {
			s.git.cmds = append(s.git.cmds, *out.command)
		}
		if out.diff != "" {
			s.diffs[c.ID] = out.diff
		}
		if out.changed != "" {
			s.edits[c.ID] = &EditNote{Path: out.changed, OldText: out.before, NewText: out.after, Created: out.created}
		}
		if out.summary != "" {
			s.summaries[c.ID] = out.summary
		}
		s.outputs[c.ID] = toolOutput{text: out.result, exitCode: out.exitCode}
		s.step(fsm.ToolCompleted{Turn: turn, CallID: c.ID, Result: out.result, IsError: out.isError, Read: s.freshlyRead(c, out.isError)})
	})
	return nil
}

// admit asks for the approval the call needs where policy says so, and
// marks it running once it may run. done reports that the call will not
// run: out is then its outcome (a refusal, or settled).
//
// hc.asked reports that the user already approved the call at a hook's
// request: under tools.bash = "ask" they are not asked again.
func (s *Conversation) admit(ctx context.Context, b *batchRun, hc hookedCall) (out toolOutcome, done bool) {
	c, asked := hc.call, hc.asked
	tool, ok := b.registry.Get(c.Name)
	if !ok {
		return toolOutcome{result: fmt.Sprintf("tool error: unknown tool %q", c.Name), isError: true}, true
	}
	if refusal := readOnlyRefusal(b, c); refusal != "" {
		return toolOutcome{result: refusal, isError: true}, true
	}
	decided := asked
	if c.Name == "bash" && !(asked && b.bash == config.PolicyAsk) {
		refusal, settled, approved := s.approveBash(ctx, b, c, hc.from)
		if settled {
			return toolOutcome{settled: true}, true
		}
		if refusal != "" {
			return toolOutcome{result: refusal, isError: true}, true
		}
		decided = approved
	}
	if t, isMCP := tool.(*mcp.Tool); isMCP {
		if refusal := s.approveMCP(ctx, b, c, t); refusal != "" {
			return toolOutcome{result: refusal, isError: true}, true
		}
	}
	if !decided && !s.markRunning(ctx, b.turn, c.ID) {
		return toolOutcome{settled: true}, true
	}
	return toolOutcome{}, false
}

// markRunning steps the call's "running" progress on the owner goroutine
// and waits until it is taken, so that what the editor is told of the
// call (running) goes out before anything the call itself asks of the
// editor. It reports false when the turn is gone (cancelled, or the
// conversation closed).
func (s *Conversation) markRunning(ctx context.Context, turn uint64, callID string) bool {
	taken := make(chan bool, 1)
	s.post(func() {
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
	case <-s.done:
		return false
	}
}

// executeLocked runs execute holding the folder's worktree lock when
// writeLock is set (a mutating call). An undo in progress finishes first
// (Conversation.Undo).
func (s *Conversation) executeLocked(ctx context.Context, b *batchRun, c fsm.ToolCall, writeLock, unsandboxed bool) toolOutcome {
	if writeLock {
		s.git.lock.Lock()
		defer s.git.lock.Unlock()
	}
	return s.execute(ctx, b, c, unsandboxed)
}

// execute runs the tool the user (or the policy) admitted, and applies
// the edit it computed. unsandboxed runs a command outside the sandbox
// (the user approved it after the sandbox blocked it). A command the
// sandbox blocked under tools.bash = "ask" comes back with escalate set.
func (s *Conversation) execute(ctx context.Context, b *batchRun, c fsm.ToolCall, unsandboxed bool) (outcome toolOutcome) {
	tool, ok := b.registry.Get(c.Name)
	if !ok {
		return toolOutcome{result: fmt.Sprintf("tool error: unknown tool %q", c.Name), isError: true}
	}
	if c.Name == fsm.AgentTool {
		return s.spawn(ctx, b, c) // its run is a child conversation (subagents.go)
	}
	if c.Name == "bash" && !b.readOnly {
		// The files the command changes: those the watcher sees change
		// until it ends, less those the editor reports meanwhile.
		// And the files as they were before it, so that its changes (not
		// the user's earlier ones) can be told apart (preimage.go).
		before := s.folder.cmds.preImages(func() []string { return s.folder.commands().dirty(ctx, b.env.ScrubEnv) })
		mark, win := s.folder.host.overlay.EditorMark(), s.folder.cmds.openWindow()
		s.writes.commandStarted()
		defer func() {
			outcome.command = s.folder.commands().close(win, mark, commandLine(c.Arguments), before)
			s.writes.commandEnded(outcome.command.paths, s.folder.host.overlay.readSeen)
			written := protectedWrites(s.folder.dir, outcome.command)
			s.folder.holdWrittenConfig(written)
			user, model := protectedWords(s.folder.dir, outcome.command.command, written)
			if user != "" {
				s.post(func() { s.notify(Notification{Kind: NoteInfo, Turn: b.turn, Text: user, Visible: true}) })
			}
			if !outcome.settled {
				outcome.result += s.folder.commands().resultNote(ctx, outcome.command) + model
			}
		}()
	}
	env := b.env
	if unsandboxed {
		env.Sandbox = nil
	}
	if readsOneFile[c.Name] {
		env.Files = s.documentSource(ctx, c.ID, env.Files)
	}
	env.Progress = func(msg string) { s.postEventLive(ctx, fsm.ToolProgress{Turn: b.turn, CallID: c.ID, Message: msg}) }
	res, err := tool.Run(ctx, &env, json.RawMessage(c.Arguments))
	if err == nil && res.Blocked != "" && b.bash == config.PolicyAsk && env.Sandbox != nil && !b.readOnly {
		return toolOutcome{result: res.Text, isError: res.IsError, summary: res.Summary, exitCode: res.ExitCode, escalate: &res}
	}
	if err != nil {
		if ctx.Err() != nil {
			return toolOutcome{result: "tool error: cancelled", isError: true}
		}
		s.folder.log.Error("tool failed", "tool", c.Name, "err", err)
		return toolOutcome{result: "tool error: " + err.Error(), isError: true}
	}
	out := toolOutcome{result: res.Text, isError: res.IsError, summary: res.Summary, exitCode: res.ExitCode}
	if res.Edit != nil && !res.IsError && b.review && res.Edit.OldText != res.Edit.NewText {
		out.propose = res.Edit
		return out
	}
	if res.Edit != nil && !res.IsError {
		if err := s.applyEdit(ctx, c.ID, res.Edit); err != nil {
			return toolOutcome{result: "tool error: " + err.Error(), isError: true}
		}
		out.changed, out.diff = res.Edit.Path, res.Edit.Diff
		out.before, out.after, out.created, out.mode = res.Edit.OldText, res.Edit.NewText, res.Edit.Created, res.Edit.Mode
	}
	return out
}

// approveBash enforces the tools.bash policy. It returns "" when the
// command may run, else the tool result that explains why not. Under
// "ask", a command the folder's approval rules cover runs unasked;
// otherwise the user is asked. The decision is an event of the machine
// (fsm.ApprovalDecided): the command runs only once the machine took an
// approval; settled reports that the machine completed the call itself
// (denied), or that the turn is gone, so that nothing more must be
// reported for it; approved that the machine took an approval (the call
// is running). from is the model's own arguments when a PreToolUse hook
// rewrote the call (c is what runs): the user is told so.
func (s *Conversation) approveBash(ctx context.Context, b *batchRun, c fsm.ToolCall, from string) (refusal string, settled, approved bool) {
	switch b.bash {
	case config.PolicyAllow:
		return "", false, false
	case config.PolicyDeny:
		return `tool error: bash is disabled here (tools.bash = "deny"); do without running commands`, false, false
	}
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	cmd := cmdrules.Parse(args.Command, s.folder.dir)
	rules, err := s.folder.host.ApprovalRules(s.folder.dir)
	if err != nil {
		s.folder.log.Warn("approval rules unreadable; asking", "err", err)
	}
	decide := func(ok bool, why string) (string, bool, bool) {
		if !s.decideApproval(ctx, fsm.ApprovalDecided{Turn: b.turn, CallID: c.ID, Approved: ok, Why: why}) || !ok {
			return "", true, false
		}
		return "", false, true
	}
	if ok, by := cmdrules.Match(rules, cmd, s.folder.dir); ok {
		return decide(true, "allowed by the rule "+ruleWords(by))
	}
	a := Approval{Folder: s.folder.dir, Turn: b.turn, Tool: c.Name, CallID: c.ID, Detail: args.Command, Rewritten: inputWordsOf(from)}
	a.Exact, a.Prefix = cmdrules.Suggest(rules, cmd, s.folder.dir)
	if a.Exact != nil {
		a.Remember = func(r cmdrules.Rule) error { return s.rememberRule(b.turn, r) }
	}
	ok, err := s.approve(ctx, a, b.approvalTimeout)
	switch {
	case errors.Is(err, ErrUnsupported):
		why := noAskWords
		if ca := (*CannotAskError)(nil); errors.As(err, &ca) && ca.Why != "" {
			why = ca.Why
		}
		s.notifyFromWorker(Notification{Kind: NoteError, Turn: b.turn, Text: NotRunWords + oneLine(args.Command) + "`: " + why + "."})
		return decide(false, why)
	case errors.Is(err, errApprovalTimeout):
		why := fmt.Sprintf("no answer within %s (tools.approval_timeout)", b.approvalTimeout)
		s.notifyFromWorker(Notification{Kind: NoteError, Turn: b.turn, Text: "Loom did not run `" + oneLine(args.Command) + "`: " + why + "."})
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

// ruleWords names the rules that allowed a command.
func ruleWords(rs []cmdrules.Rule) string {
	words := make([]string, len(rs))
	for i, r := range rs {
		words[i] = r.String()
	}
	return strings.Join(words, " and ")
}

// rememberRule saves a rule the user picked in an approval and tells so.
func (s *Conversation) rememberRule(turn uint64, r cmdrules.Rule) error {
	saved, err := s.folder.host.AddApprovalRule(s.folder.dir, r)
	if err != nil {
		s.notifyFromWorker(Notification{Kind: NoteError, Turn: turn, Text: "Loom allowed the command once, but did not save the rule: " + err.Error()})
		return err
	}
	s.notifyFromWorker(Notification{Kind: NoteInfo, Turn: turn, Text: "Loom now runs " + saved.String() + " without asking in this folder (loom.removeRule undoes it)."})
	return nil
}

// notifyFromWorker sends n from a tool worker, through the owner
// goroutine.
func (s *Conversation) notifyFromWorker(n Notification) {
	s.post(func() { s.notify(n) })
}

// oneLine shortens a command for a one-line message.
func oneLine(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if len(cmd) > 120 {
		cmd = cmd[:117] + "…"
	}
	return cmd
}

// decideApproval steps the user's decision on the owner goroutine and
// reports whether the machine took it. A decision for a turn cancelled
// meanwhile is dropped: it is not taken.
func (s *Conversation) decideApproval(ctx context.Context, ev fsm.ApprovalDecided) bool {
	return s.stepTaken(ctx, ev)
}

// stepTaken steps ev on the owner goroutine, from a batch's goroutine,
// and reports whether the machine took it: false when ctx ended first
// (the turn was cancelled) or the conversation closed.
func (s *Conversation) stepTaken(ctx context.Context, ev fsm.Event) bool {
	taken := make(chan bool, 1)
	s.post(func() {
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
	case <-s.done:
		return false
	}
}

// applyEdit lands an edit: through the editor when the document is open
// there (a versioned edit, refused if the user typed meanwhile), else
// atomically on disk. callID is the tool call that computed it.
func (s *Conversation) applyEdit(ctx context.Context, callID string, e *tools.Edit) error {
	// The tools refuse these already; whatever else computes an edit
	// (a review applying a proposal later) meets the same wall.
	if err := config.CheckProtected(s.folder.dir, e.Path); err != nil {
		return err
	}
	overlay := s.folder.host.overlay
	// The watcher may see the write before the read record below holds
	// it: that echo is ours, not news.
	s.writes.expect(e.Path, []byte(e.NewText))
	for attempt := 1; ; attempt++ {
		text, version, open := overlay.Document(e.Path)
		if !open {
			break
		}
		if text != e.OldText {
			// The user typed since the edit was computed: rebase it onto
			// their text, unless both changed the same lines.
			merged, err := tools.Rebase(e.OldText, e.NewText, text)
			if err != nil {
				return fmt.Errorf("%s changed in the editor while the edit was computed, on the lines it changes (%v); read it again", e.RelPath, err)
			}
			*e = *tools.NewEdit(s.folder.dir, e.Path, e.Created, text, merged, e.Mode)
			s.writes.expect(e.Path, []byte(e.NewText))
		}
		err := s.folder.host.opts.Editor.ApplyEdit(ctx, DocumentEdit{Path: e.Path, Version: version, Edits: e.TextEdits, NewText: e.NewText})
		switch {
		case err == nil:
			// The editor reports its new text with a didChange; wait for it
			// so that the next read sees the edit.
			settle, cancel := context.WithTimeout(ctx, editSettleTimeout)
			overlay.waitChanged(e.Path, version, settle.Done())
			cancel()
			s.reads.Record(e.Path, []byte(e.NewText))
			return nil
		case errors.Is(err, ErrEditRejected) && attempt < maxEditAttempts:
			// The user typed while the edit was on its way: wait for
			// their didChange, then rebase onto it.
			settle, cancel := context.WithTimeout(ctx, editSettleTimeout)
			overlay.waitChanged(e.Path, version, settle.Done())
			cancel()
			continue
		case errors.Is(err, ErrEditRejected):
			return fmt.Errorf("the editor refused the edit to %s (%v): the document kept changing; read it again", e.RelPath, err)
		case !errors.Is(err, ErrUnsupported):
			return fmt.Errorf("apply the edit to %s: %w", e.RelPath, err)
		}
		break
	}
	if store, ok := s.folder.host.opts.Editor.(DocumentStore); ok {
		// Recorded first: the client may write the disk before it answers,
		// and the watcher must see our own text there, not a change.
		s.reads.Record(e.Path, []byte(e.NewText))
		err := store.WriteDocument(ctx, s.caller(callID), e.Path, e.NewText)
		if err == nil {
			return nil
		}
		s.reads.Record(e.Path, []byte(e.OldText))
		if !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("write %s through the editor: %w", e.RelPath, err)
		}
	}
	if err := s.writeEdit(e); err != nil {
		return err
	}
	s.reads.Record(e.Path, []byte(e.NewText))
	return nil
}
