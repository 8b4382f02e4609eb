package acp

import (
	"context"
	"errors"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Subagents: ACP "Subagent Sessions" (RFD completed, stable since
// 2026-11-20), which acp-go-sdk v0.13.0 lacks. In ACP v1 a client opts in
// with clientCapabilities.subagents = {} (moved into the initialize
// request's _meta by the wire reader, wire.go). To such a client each
// child conversation is a child session whose id is the child's
// conversation id:
//
//   - a subagent_update on the parent's session announces it (title,
//     description, state running) before any update of the child's
//     session, and reports its state: requires_action while one of its
//     permission requests waits, running again after, idle at its end
//     (stopReason end_turn, or cancelled; a failed child is idle with no
//     stop reason and _meta "loom.subagent".state = "failed");
//   - the child's messages and tool calls are ordinary session updates on
//     its own session id, and its permission requests name its session;
//   - session/cancel on its id stops that child only (its parent's turn
//     goes on, and its model reads that the user stopped it); cancelling
//     the parent's turn cancels its children.
//
// A client that did not opt in sees each child as the progress of the
// parent's agent call (workspace shows it there), and a child's
// permission request on the parent's session, on the parent's agent call,
// titled with the child's name and task (Approval.Subagent.Words).

// metaSubagentsCapability is the _meta key clientCapabilities.subagents
// is moved to (wire.go).
const metaSubagentsCapability = "loom.wire/clientCapabilities.subagents"

// subagentUpdate is the session update that announces a child session
// and patches its metadata (schema v1 SubagentUpdate): only sessionId is
// required; omitted members keep their values.
type subagentUpdate struct {
	SessionUpdate string           `json:"sessionUpdate"` // "subagent_update"
	SessionID     acpsdk.SessionId `json:"sessionId"`
	Title         string           `json:"title,omitempty"`
	Description   string           `json:"description,omitempty"`
	State         *subagentState   `json:"state,omitempty"`
	Meta          map[string]any   `json:"_meta,omitempty"`
}

// subagentState is a child's foreground-work state (schema v1
// StateUpdate): running, idle (with a stopReason), requires_action.
type subagentState struct {
	State      string `json:"state"`
	StopReason string `json:"stopReason,omitempty"`
}

// The child's states.
const (
	subagentRunning        = "running"
	subagentIdle           = "idle"
	subagentRequiresAction = "requires_action"
)

// subagentNote is a parent's NoteSubagent on its ACP session s: a child
// started or ended.
func (o sessionOut) subagentNote(info *workspace.SubagentInfo) {
	a, s := o.a, o.s
	if info == nil || info.Conversation == "" || info.Activity != "" || !a.subagentsOn() {
		return // updates: the child's session shows what it does, its permission requests its state
	}
	id := acpsdk.SessionId(info.Conversation)
	u := subagentUpdate{SessionUpdate: "subagent_update", SessionID: id}
	meta := map[string]any{"agent": info.Agent, "callId": info.CallID, "depth": info.Depth, "readOnly": info.ReadOnly}
	switch info.State {
	case "running":
		u.Title, u.Description = info.Agent+" "+info.Child, info.Task
		u.State = &subagentState{State: subagentRunning}
		u.Meta = map[string]any{"loom.subagent": meta}
		// Announced and registered at once: the child's first update
		// (on another goroutine) finds it, and goes out after it.
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.children == nil {
			a.children = map[acpsdk.SessionId]*childSession{}
		}
		a.children[id] = &childSession{session: &session{id: id, folder: s.folder, always: s.always}, parent: s.id}
		a.updates.sendRawLocked(s.id, u)
		return
	default:
		u.State = &subagentState{State: subagentIdle}
		switch info.State {
		case "completed":
			u.State.StopReason = string(acpsdk.StopReasonEndTurn)
		case "cancelled":
			u.State.StopReason = string(acpsdk.StopReasonCancelled)
		}
		meta["state"] = info.State
		if info.Usage != nil {
			meta["tokens"] = info.Usage.TotalTokens
		}
		a.mu.Lock()
		delete(a.children, id)
		a.mu.Unlock()
	}
	u.Meta = map[string]any{"loom.subagent": meta}
	a.updates.sendRaw(s.id, u)
}

// childSession is a child conversation shown as an ACP child session of
// the session parent.
type childSession struct {
	*session
	parent acpsdk.SessionId
}

// subagentsOn reports whether the client opted in to child sessions.
func (a *agent) subagentsOn() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.subagentsCapable
}

// child is the announced child session of conversation id, nil if none.
func (a *agent) child(id string) *childSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.children[acpsdk.SessionId(id)]
}

// childNotify shows a child's own notification on its child session, or
// drops it when none was announced (the client did not opt in: the
// parent's agent call shows its progress).
func (a *agent) childNotify(n workspace.Notification) {
	c := a.child(n.Conversation)
	if c == nil {
		a.log.Debug("a subagent's notification, not shown as a session", "kind", n.Kind)
		return
	}
	workspace.Deliver(n.Typed(), childOut{sessionOut{a, c.session}})
}

// childOut is a child session's output: the session's, but what belongs
// to a prompt of the client (the turn's end and its error, the mode, the
// plan, the title, usage) is the parent's to report (subagent_update).
type childOut struct{ sessionOut }

func (childOut) TurnEnded(workspace.TurnEnded)         {}
func (childOut) StateChanged(workspace.StateChanged)   {}
func (childOut) ModeChanged(workspace.ModeChanged)     {}
func (childOut) PlanChanged(workspace.PlanChanged)     {}
func (childOut) PlanProposed(workspace.PlanProposed)   {}
func (childOut) TitleChanged(workspace.TitleChanged)   {}
func (childOut) Compacted(workspace.Compacted)         {}
func (childOut) TextRetracted(workspace.TextRetracted) {}

// ErrorReported: the turn's error is the parent's to report (the child
// ends failed); other errors are said as on any session.
func (o childOut) ErrorReported(n workspace.ErrorReported) {
	if n.Kind == "" {
		o.sessionOut.ErrorReported(n)
	}
}

// childApproval is where a child's permission request goes: its own
// child session when announced, with its state requires_action while it
// waits (done puts it back to running); else the parent's session s, on
// the parent's agent call, titled with the child's name.
func (a *agent) childApproval(s *session, ap *workspace.Approval, title *string) (target *session, callID string, done func()) {
	info := ap.Subagent
	if c := a.child(info.Conversation); c != nil {
		set := func(state string) {
			a.updates.sendRaw(c.parent, subagentUpdate{SessionUpdate: "subagent_update", SessionID: c.id, State: &subagentState{State: state}})
		}
		set(subagentRequiresAction)
		return c.session, ap.CallID, func() { set(subagentRunning) }
	}
	*title = fmt.Sprintf("%s: %s", info.Words(), *title)
	return s, info.CallID, func() {}
}

// cancelChild stops the announced child session id alone, whatever its
// depth: the conversation at the top of its parents stops it
// (workspace.Conversation.StopSubagent finds any descendant by its
// conversation id). A child that ended meanwhile is no error.
func (a *agent) cancelChild(ctx context.Context, id acpsdk.SessionId) error {
	root := id
	for c := a.child(string(root)); c != nil; c = a.child(string(root)) {
		root = c.parent
	}
	s, err := a.liveSession(root)
	if err != nil {
		a.log.Info("session/cancel of a subagent ignored", "session", id, "err", err)
		return nil
	}
	if err := s.ws.StopSubagent(ctx, string(id)); err != nil && !errors.Is(err, workspace.ErrNoSubagent) {
		return err
	}
	return nil
}
