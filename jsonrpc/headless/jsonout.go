package headless

import (
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// jsonOut writes notifications as JSONL events (see Event). It runs under
// the editor's lock.
type jsonOut struct{ h *Editor }

var _ workspace.NoteHandler = jsonOut{}

// event writes ev.
func (o jsonOut) event(ev Event) { o.h.writeEvent(ev) }

// TurnStarted writes turn_started.
func (o jsonOut) TurnStarted(n workspace.TurnStarted) {
	o.event(Event{Type: "turn_started", Turn: n.Turn, SessionID: o.h.sessionID, Folder: n.Folder, Prompt: n.Prompt})
}

// TextDelta adds to the message being streamed and writes message_delta
// (unless NoDeltas).
func (o jsonOut) TextDelta(n workspace.TextDelta) {
	h := o.h
	if n.Text == "" {
		return
	}
	h.message.WriteString(n.Text)
	if h.opts.NoDeltas {
		return
	}
	o.event(Event{Type: "message_delta", Turn: n.Turn, ID: h.messageID(n.Turn), Text: n.Text})
}

// ReasoningDelta writes reasoning_delta (unless NoDeltas).
func (o jsonOut) ReasoningDelta(n workspace.ReasoningDelta) {
	if n.Text == "" || o.h.opts.NoDeltas {
		return
	}
	o.event(Event{Type: "reasoning_delta", Turn: n.Turn, Text: n.Text})
}

// ToolUpdated writes tool_started or tool_completed (toolEvent).
func (o jsonOut) ToolUpdated(n workspace.ToolUpdated) {
	if ev, ok := toolEvent(n); ok {
		o.event(ev)
	}
}

// DiagnosticsReported writes diagnostics.
func (o jsonOut) DiagnosticsReported(n workspace.DiagnosticsReported) {
	d := n.Diagnostics
	o.event(Event{Type: "diagnostics", Turn: n.Turn, ID: d.CallID, Summary: d.Summary, Diagnostics: d.New})
}

// HookReported writes hook.
func (o jsonOut) HookReported(n workspace.HookReported) {
	o.event(Event{Type: "hook", Turn: n.Turn, Hook: n.Hook})
}

// Committed writes commit.
func (o jsonOut) Committed(n workspace.Committed) {
	c := n.Commit
	o.event(Event{Type: "commit", Turn: n.Turn, SHA: c.SHA, Files: c.Files, Message: c.Message, Notes: c.Notes})
}

// RetryScheduled writes retry_scheduled.
func (o jsonOut) RetryScheduled(n workspace.RetryScheduled) {
	o.event(Event{Type: "retry_scheduled", Turn: n.Turn, DelayMS: n.Delay.Milliseconds(), Reason: n.Reason, Kind: string(n.Kind)})
}

// ErrorReported writes error, of kind other when it is not the model's.
func (o jsonOut) ErrorReported(n workspace.ErrorReported) {
	kind := string(n.Kind)
	if kind == "" {
		kind = string(fsm.ErrorOther)
	}
	o.event(Event{Type: "error", Turn: n.Turn, Message: n.Text, Kind: kind})
}

// CommandsChanged writes command_changes.
func (o jsonOut) CommandsChanged(n workspace.CommandsChanged) {
	o.event(Event{Type: "command_changes", Turn: n.Turn, Changes: n.Changes})
}

// InfoReported writes info.
func (o jsonOut) InfoReported(n workspace.InfoReported) {
	o.event(Event{Type: "info", Turn: n.Turn, Message: n.Text})
}

// ChangeProposed writes a proposed_change for each file of the proposal.
func (o jsonOut) ChangeProposed(n workspace.ChangeProposed) {
	for _, c := range n.Proposal.Changes {
		ev := Event{Type: "proposed_change", Turn: n.Turn, ID: n.Proposal.ID, Path: c.Path, Kind: string(c.Kind), Diff: c.Diff}
		for _, hk := range c.Hunks {
			ev.Hunks = append(ev.Hunks, HunkEvent{ID: hk.ID, Diff: hk.Diff, StartLine: hk.StartLine, EndLine: hk.EndLine})
		}
		o.event(ev)
	}
}

// Compacted writes compacted.
func (o jsonOut) Compacted(n workspace.Compacted) {
	ev := Event{Type: "compacted", Turn: n.Turn, Summary: n.Summary}
	if c := n.Compaction; c != nil {
		ev.Dropped, ev.Tokens = c.Dropped, c.Tokens
	}
	o.event(ev)
}

// TurnEnded writes turn_completed.
func (o jsonOut) TurnEnded(n workspace.TurnEnded) {
	usage := n.Usage
	o.event(Event{Type: "turn_completed", Turn: n.Turn, Outcome: string(n.Outcome), Usage: &usage, ConversationUsage: n.TotalUsage})
}

// ModeChanged writes mode.
func (o jsonOut) ModeChanged(n workspace.ModeChanged) {
	o.event(Event{Type: "mode", Turn: n.Turn, Mode: string(n.Mode)})
}

// PlanChanged writes plan.
func (o jsonOut) PlanChanged(n workspace.PlanChanged) {
	plan := append([]fsm.PlanItem{}, n.Plan...)
	o.event(Event{Type: "plan", Turn: n.Turn, Plan: &plan})
}

// PlanProposed writes plan_proposed.
func (o jsonOut) PlanProposed(n workspace.PlanProposed) {
	o.event(Event{Type: "plan_proposed", Turn: n.Turn, Text: n.Plan, ID: n.CallID})
}

// The notes JSONL has no event for.

func (jsonOut) TextRetracted(workspace.TextRetracted)     {}
func (jsonOut) StateChanged(workspace.StateChanged)       {}
func (jsonOut) Rewound(workspace.Rewound)                 {}
func (jsonOut) SubagentChanged(workspace.SubagentChanged) {}
func (jsonOut) TitleChanged(workspace.TitleChanged)       {}
