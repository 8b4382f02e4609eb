package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Notify implements workspace.Editor: a session's news become
// session/update notifications of the ACP session holding its folder. The
// model's text is the agent message, exactly; what loom-lsp itself has to
// say (a commit, a retry, a failed hook) goes out as agent thought.
func (a *agent) Notify(n workspace.Notification) {
	if a.openings.caught(n) {
		return
	}
	if n.Subagent != nil && n.Kind != workspace.NoteSubagent {
		a.childNotify(n) // a child's own: its child session's
		return
	}
	sessions := a.sessionsOf(n.Folder, n.Conversation)
	if len(sessions) == 0 {
		a.log.Debug("no ACP session for a notification", "folder", n.Folder, "kind", n.Kind, "text", n.Text)
		return
	}
	for _, s := range sessions {
		a.notifySession(s, n)
	}
}

// notifySession sends n to the ACP session s, through the method of
// sessionOut for its type.
func (a *agent) notifySession(s *session, n workspace.Notification) {
	// Every notification in the debug log (its text masked like all the
	// log's): what a user reads when the client shows something odd.
	a.log.Debug("notification", "folder", n.Folder, "kind", n.Kind, "text", n.Text)
	if note := n.Typed(); note != nil {
		workspace.Deliver(note, sessionOut{a, s})
	}
}

// sessionOut turns one ACP session's notifications into session/update
// notifications: the model's text is the agent message, exactly; what
// loom-lsp itself has to say (a commit, a retry, a failed hook) goes out
// as agent thought.
type sessionOut struct {
	a *agent
	s *session
}

var _ workspace.NoteHandler = sessionOut{}

// thought sends text as agent thought.
func (o sessionOut) thought(text string) {
	o.a.updates.send(o.s.id, acpsdk.UpdateAgentThoughtText(text))
}

// TextDelta sends the model's text as the turn's agent message.
func (o sessionOut) TextDelta(n workspace.TextDelta) {
	if n.Text == "" {
		return
	}
	u := acpsdk.UpdateAgentMessageText(n.Text)
	id := o.messageID(n.Turn)
	u.AgentMessageChunk.MessageId = &id
	o.a.updates.send(o.s.id, u)
}

// TextRetracted: the text of the failed request is abandoned; what
// follows is a new message (a new messageId), and clients that do not
// follow message ids are told in words.
func (o sessionOut) TextRetracted(workspace.TextRetracted) {
	o.a.mu.Lock()
	o.s.retracted++
	o.a.mu.Unlock()
	o.thought(workspace.RetractWords)
}

// ReasoningDelta sends the model's own reasoning as agent_thought_chunk,
// apart from the answer.
func (o sessionOut) ReasoningDelta(n workspace.ReasoningDelta) {
	if n.Text != "" {
		o.thought(n.Text)
	}
}

// ToolUpdated shows the call (toolNote).
func (o sessionOut) ToolUpdated(n workspace.ToolUpdated) { o.toolNote(n.Call) }

// ChangeProposed asks the client to review the change.
func (o sessionOut) ChangeProposed(n workspace.ChangeProposed) {
	go o.reviewProposal(n.Proposal)
}

// Rewound says the rewind (a redo says nothing).
func (o sessionOut) Rewound(n workspace.Rewound) {
	if !n.Redone {
		o.thought(fmt.Sprintf("the conversation was rewound to before turn %d", n.Turn))
	}
}

// ErrorReported keeps the turn's own error for session/prompt's answer
// when the turn fails; the trust notice asks the user to answer it with
// /trust; other errors are agent thought.
func (o sessionOut) ErrorReported(n workspace.ErrorReported) {
	if n.Kind != "" {
		k := turnKey{o.s.id, n.Turn}
		o.a.updates.markFor(o.s.id, func() { o.a.waitFor(k).err = &n })
		return
	}
	if n.Trust {
		o.trustNotice(n.Text)
		return
	}
	o.thought("⚠ " + n.Text)
}

// RetryScheduled says the retry.
func (o sessionOut) RetryScheduled(n workspace.RetryScheduled) { o.thought(n.Words()) }

// Committed says the commit and its notes.
func (o sessionOut) Committed(n workspace.Committed) {
	subject, _, _ := strings.Cut(n.Commit.Message, "\n")
	text := fmt.Sprintf("committed %.7s %s", n.Commit.SHA, subject)
	for _, note := range n.Commit.Notes {
		text += "\n· " + note
	}
	o.thought(text)
}

// CommandsChanged lists the files commands changed, with how to keep or
// discard each.
func (o sessionOut) CommandsChanged(n workspace.CommandsChanged) {
	var b strings.Builder
	for _, c := range n.Changes {
		fmt.Fprintf(&b, "changed by `%s` — not committed: %s (keep: /keep %s, discard: /discard %s)\n", c.Command, c.Rel, c.Rel, c.Rel)
		if c.Diff != "" {
			b.WriteString("```diff\n" + c.Diff + "```\n")
		}
	}
	o.thought(b.String())
}

// InfoReported says what the user must see (the auto-commit's notes) as
// thought, the rest as a notice.
func (o sessionOut) InfoReported(n workspace.InfoReported) {
	if n.Visible {
		o.thought("· " + n.Text)
		return
	}
	o.notice(infoKind(n.Source()), n.Text)
}

// HookReported says what an agent hook said: a line the user reads
// beside the answer.
func (o sessionOut) HookReported(n workspace.HookReported) { o.thought("⚑ " + n.Hook.Line()) }

// Compacted says the compaction.
func (o sessionOut) Compacted(workspace.Compacted) {
	o.thought("· the conversation was compacted: older messages are replaced by a summary")
}

// TurnEnded answers the turn's session/prompt.
func (o sessionOut) TurnEnded(n workspace.TurnEnded) {
	o.proposalDone()
	k := turnKey{o.s.id, n.Turn}
	o.a.updates.markFor(o.s.id, func() {
		w := o.a.waitFor(k)
		w.outcome, w.usage = n.Outcome, n.Usage
		close(w.done)
	})
}

// ModeChanged sends current_mode_update.
func (o sessionOut) ModeChanged(n workspace.ModeChanged) { o.modeChanged(n.Mode) }

// PlanChanged sends the todo list as plan.
func (o sessionOut) PlanChanged(n workspace.PlanChanged) { o.sendTodo(n.Plan) }

// PlanProposed shows the plan and asks the user to decide it.
func (o sessionOut) PlanProposed(n workspace.PlanProposed) {
	if n.CallID == "" {
		return
	}
	o.showProposal(n.CallID, n.Plan)
	go o.decidePlan(n.CallID, n.Plan)
}

// TitleChanged sends session_info_update.
func (o sessionOut) TitleChanged(n workspace.TitleChanged) {
	if n.Title != "" {
		o.a.updates.send(o.s.id, titleUpdate(n.Title))
	}
}

// StateChanged sends the context's use (usage_update).
func (o sessionOut) StateChanged(n workspace.StateChanged) {
	if n.Context != nil && n.Context.Window > 0 {
		o.a.updates.send(o.s.id, usageUpdate(n.Context))
	}
}

// TurnStarted: the client sent the prompt; on v2 the session is running.
func (o sessionOut) TurnStarted(workspace.TurnStarted) { o.a.turnStarted(o.s.id) }

// DiagnosticsReported sends nothing: the call that reports them shows
// them.
func (o sessionOut) DiagnosticsReported(workspace.DiagnosticsReported) {}

// SubagentChanged announces a child session to a client that declared
// subagents, and reports its state (subagents.go).
func (o sessionOut) SubagentChanged(n workspace.SubagentChanged) { o.subagentNote(n.Subagent) }

// messageID names the agent message the session's text belongs to: one
// per turn, and a new one after each retraction.
func (o sessionOut) messageID(turn uint64) string {
	a, s := o.a, o.s
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprintf("%s-%d-%d", s.id, turn, s.retracted)
}

// toolNote shows a tool call's new status: tool_call when its arguments
// are complete, tool_call_update in_progress once it runs (pending again
// while its change waits for review), then completed
// or failed with its output. A call refused before it ran is announced
// with its final status.
func (o sessionOut) toolNote(t *workspace.ToolNote) {
	a, s := o.a, o.s
	key := string(s.id) + "\x00" + t.CallID
	a.mu.Lock()
	shown := a.announce[key]
	switch t.Status {
	case fsm.ToolPending:
		a.announce[key] = toolAnnounced
	case fsm.ToolRunning:
		if t.Detail == fsm.ReviewWaiting {
			// Its change waits for the user's review: the call is
			// pending again (ACP's status for a call waiting for the
			// user, as a command waiting for approval) until decided.
			a.announce[key] = toolAnnounced
			a.mu.Unlock()
			a.updates.send(s.id, acpsdk.UpdateToolCall(acpsdk.ToolCallId(t.CallID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusPending)))
			return
		}
		a.announce[key] = toolRunning
	case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
		delete(a.announce, key)
	}
	a.mu.Unlock()
	switch t.Status {
	case fsm.ToolPending:
		if t.Rewritten && shown != toolUnseen {
			// A PreToolUse hook rewrote the input: the call, announced
			// already, shows what runs instead.
			v := viewTool(s.folder, t.Name, t.Arguments)
			opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateTitle(v.title + " (" + fsm.RewrittenWords + ")"), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusPending)}
			if v.rawInput != nil {
				opts = append(opts, acpsdk.WithUpdateRawInput(v.rawInput))
			}
			if len(v.locations) > 0 {
				opts = append(opts, acpsdk.WithUpdateLocations(v.locations))
			}
			a.updates.send(s.id, acpsdk.UpdateToolCall(acpsdk.ToolCallId(t.CallID), opts...))
			return
		}
		a.updates.send(s.id, startUpdate(t.CallID, viewTool(s.folder, t.Name, t.Arguments), acpsdk.ToolCallStatusPending))
	case fsm.ToolRunning:
		if shown != toolRunning {
			a.updates.send(s.id, acpsdk.UpdateToolCall(acpsdk.ToolCallId(t.CallID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)))
		}
	case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
		if shown == toolUnseen {
			a.updates.send(s.id, startUpdate(t.CallID, viewTool(s.folder, t.Name, ""), acpsdk.ToolCallStatusPending))
		}
		a.updates.send(s.id, finishUpdate(t))
	}
}

// What a client was told of a tool call so far.
const (
	toolUnseen = iota
	toolAnnounced
	toolRunning
)

// ApplyEdit implements workspace.Editor: ACP has no versioned buffer
// edits; edits go through WriteDocument (fs/write_text_file) or to disk.
func (a *agent) ApplyEdit(context.Context, workspace.DocumentEdit) error {
	return workspace.ErrUnsupported
}

// SaveDocuments implements workspace.Editor: ACP cannot ask the client to
// save; the hook commits the text the agent wrote.
func (a *agent) SaveDocuments(context.Context, []string) ([]string, error) {
	return nil, workspace.ErrUnsupported
}

// The option ids of a permission request.
const (
	optionAllowOnce    = "allow_once"
	optionAllowAlways  = "allow_always"
	optionRejectOnce   = "reject_once"
	optionRejectAlways = "reject_always"
	// optionRuleExact and optionRulePrefix save an approval rule for the
	// folder (workspace.Approval's Exact and Prefix).
	optionRuleExact  = "allow_rule_exact"
	optionRulePrefix = "allow_rule_prefix"
	// optionHost saves a fetch's host for the folder (workspace.Approval's
	// Host and Always).
	optionHost = "allow_host"
)

// Approve implements workspace.Editor with session/request_permission. An
// "always" answer holds for the tool for the rest of the ACP session, and
// the client is not asked again; a cancelled request is a denial.
func (a *agent) Approve(ctx context.Context, ap workspace.Approval) (bool, error) {
	var s *session
	if all := a.sessionsOf(ap.Folder, ap.Conversation); len(all) > 0 && ap.Conversation != "" {
		s = all[0]
	} else {
		s = a.liveIn(ap.Folder)
	}
	if s == nil {
		return false, fmt.Errorf("%w: %s", errNoSession, ap.Folder)
	}
	a.mu.Lock()
	decided, ok := s.always[ap.Tool]
	a.mu.Unlock()
	if ok {
		return decided, nil
	}
	// The tool_call the request is about goes out first.
	if err := a.out.flush(ctx); err != nil {
		return false, err
	}
	v := approvalView(s.folder, ap)
	asker, callID := s, ap.CallID
	if ap.Subagent != nil {
		var done func()
		asker, callID, done = a.childApproval(s, &ap, &v.title)
		defer done()
		if err := a.out.flush(ctx); err != nil { // its requires_action first
			return false, err
		}
	}
	resp, err := a.requestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: asker.id,
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(callID),
			Title:      acpsdk.Ptr(v.title),
			Kind:       acpsdk.Ptr(v.kind),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			RawInput:   v.rawInput,
		},
		Options: permissionOptions(ap),
	})
	if err != nil {
		return false, err
	}
	if resp.Outcome.Selected == nil {
		return false, nil // cancelled
	}
	allow, always := chosen(ap, resp.Outcome.Selected.OptionId)
	if always {
		a.mu.Lock()
		s.always[ap.Tool] = allow
		a.mu.Unlock()
	}
	return allow, nil
}

// approvalView is how the call an approval is about is shown: a command
// or a URL as the call's input, an MCP tool by its server, name and
// arguments.
func approvalView(folder string, ap workspace.Approval) toolView {
	v := viewTool(folder, ap.Tool, "")
	switch ap.Tool {
	case "bash":
		v = viewTool(folder, ap.Tool, fmt.Sprintf(`{"command":%q}`, ap.Detail))
		v.rawInput = map[string]any{"command": ap.Detail}
	case "fetch":
		v = viewTool(folder, ap.Tool, fmt.Sprintf(`{"url":%q}`, ap.Detail))
	}
	if ap.Server != "" {
		v.title = ap.Detail // an MCP tool: its server, name and arguments
	}
	return v
}

// chosen carries out the option id picked for approval ap: whether the
// call is allowed, and whether that answer is kept for the tool (allow
// or reject always). Allowing the host or a rule saves it through ap.
func chosen(ap workspace.Approval, id acpsdk.PermissionOptionId) (allow, always bool) {
	switch id {
	case optionAllowOnce:
		return true, false
	case optionHost:
		if ap.Always != nil {
			ap.Always() // saves the host for the folder, and says so
		}
		return true, false
	case optionRuleExact, optionRulePrefix:
		if r := ruleOf(ap, id); r != nil && ap.Remember != nil {
			_ = ap.Remember(*r) // a rule that cannot be saved is reported; the command runs once
		}
		return true, false
	case optionAllowAlways, optionRejectAlways:
		return id == optionAllowAlways, true
	}
	return false, false
}

// permissionOptions are the answers offered for ap: once, the folder's
// approval rules the session suggests (this exact command, commands
// starting with a prefix), always in this session, or reject.
func permissionOptions(ap workspace.Approval) []acpsdk.PermissionOption {
	opts := []acpsdk.PermissionOption{{OptionId: optionAllowOnce, Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce}}
	if ap.Remember != nil && ap.Exact != nil {
		opts = append(opts, acpsdk.PermissionOption{OptionId: optionRuleExact, Name: "Always allow `" + ap.Exact.Exact + "` in this folder", Kind: acpsdk.PermissionOptionKindAllowAlways})
	}
	if ap.Remember != nil && ap.Prefix != nil {
		opts = append(opts, acpsdk.PermissionOption{OptionId: optionRulePrefix, Name: "Always allow commands starting with `" + ap.Prefix.Prefix + "` in this folder", Kind: acpsdk.PermissionOptionKindAllowAlways})
	}
	if ap.Host != "" && ap.Always != nil {
		// A fetch: the host for the folder, not every URL for the session.
		opts = append(opts, acpsdk.PermissionOption{OptionId: optionHost, Name: "Always allow fetches from " + ap.Host + " in this folder", Kind: acpsdk.PermissionOptionKindAllowAlways})
	} else {
		opts = append(opts, acpsdk.PermissionOption{OptionId: optionAllowAlways, Name: "Always allow " + ap.Tool + " in this session", Kind: acpsdk.PermissionOptionKindAllowAlways})
	}
	return append(opts,
		acpsdk.PermissionOption{OptionId: optionRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		acpsdk.PermissionOption{OptionId: optionRejectAlways, Name: "Always reject " + ap.Tool + " in this session", Kind: acpsdk.PermissionOptionKindRejectAlways},
	)
}

// ruleOf is the rule an option id picks.
func ruleOf(ap workspace.Approval, id acpsdk.PermissionOptionId) *cmdrules.Rule {
	if id == optionRulePrefix {
		return ap.Prefix
	}
	return ap.Exact
}

// fileSession returns the session to read or write a file through for
// by (the session of its conversation), or ErrUnsupported when the client
// cannot.
func (a *agent) fileSession(by workspace.DocumentCaller, write bool) (*session, error) {
	a.mu.Lock()
	can := a.fs.ReadTextFile
	if write {
		can = a.fs.WriteTextFile
	}
	a.mu.Unlock()
	var s *session
	if all := a.sessionsOf(by.Folder, by.Conversation); len(all) > 0 && by.Conversation != "" {
		s = all[0]
	} else {
		s = a.liveIn(by.Folder)
	}
	if !can || s == nil {
		return nil, workspace.ErrUnsupported
	}
	return s, nil
}

// ReadDocument implements workspace.DocumentStore with fs/read_text_file,
// when the client advertised it. The updates queued before it (the
// tool_call of the call that reads, and its in_progress) go out first:
// notifications and requests share the connection, and a client must
// never see a read it cannot explain.
func (a *agent) ReadDocument(ctx context.Context, by workspace.DocumentCaller, path string) (string, error) {
	s, err := a.fileSession(by, false)
	if err != nil {
		return "", err
	}
	if err := a.out.flush(ctx); err != nil {
		return "", err
	}
	resp, err := a.client().ReadTextFile(ctx, acpsdk.ReadTextFileRequest{SessionId: s.id, Path: path})
	if err != nil {
		// Clients answer a missing file with an error of their own
		// making (Zed, acpx, acp.el each word it differently): a file
		// that is not on disk either does not exist, which the caller
		// handles (a reviewed new file is then written, not failed).
		if _, statErr := os.Lstat(path); errors.Is(statErr, fs.ErrNotExist) && ctx.Err() == nil {
			return "", fmt.Errorf("%w: %s (the editor said: %v)", fs.ErrNotExist, path, err)
		}
		return "", err
	}
	return resp.Content, nil
}

// WriteDocument implements workspace.DocumentStore with
// fs/write_text_file, when the client advertised it; like ReadDocument,
// after the updates queued before it.
func (a *agent) WriteDocument(ctx context.Context, by workspace.DocumentCaller, path, text string) error {
	s, err := a.fileSession(by, true)
	if err != nil {
		return err
	}
	if err := a.out.flush(ctx); err != nil {
		return err
	}
	_, err = a.client().WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: s.id, Path: path, Content: text})
	return err
}
