package workspace

import (
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// reviewAction performs an action of the changes' review on r; ok is
// false for the others.
func reviewAction(r *changes.Review, a fsm.Action) (ok bool) {
	switch a := a.(type) {
	case fsm.ProposeChanges:
		r.Named(a)
	case fsm.ApplyChanges:
		r.Apply(a)
	case fsm.RewindFiles, fsm.RedoFiles:
		// Done by Rewind and Redo before they stepped the event, so that
		// a refused one changes nothing.
	default:
		return false
	}
	return true
}

// displayNote is the notification of an action that only shows
// something; ok is false for the others.
func displayNote(a fsm.Action) (n Notification, ok bool) {
	switch a := a.(type) {
	case fsm.DisplayHook:
		if !shown(a.Report) {
			return Notification{}, false
		}
		return Notification{Kind: NoteHook, Turn: a.Turn, Hook: hookNote(a)}, true
	case *fsm.DisplayMessage:
		return Notification{Kind: NoteText, Turn: a.Turn, Text: a.Text}, true
	case fsm.DisplayReasoning:
		return Notification{Kind: NoteReasoning, Turn: a.Turn, Text: a.Text}, true
	case fsm.RetractMessage:
		return Notification{Kind: NoteRetract, Turn: a.Turn}, true
	case fsm.DisplayError:
		return Notification{Kind: NoteError, Turn: a.Turn, Text: a.Message, ErrorKind: a.Kind}, true
	case fsm.ConversationRewound:
		return Notification{Kind: NoteRewound, Turn: a.Turn, Text: a.Prompt}, true
	case fsm.ConversationRedone:
		return Notification{Kind: NoteRewound, Turn: a.Turn, Redone: true}, true
	case fsm.CompactionStarted:
		return Notification{Kind: NoteInfo, Turn: a.Turn, Text: a.Message()}, true
	}
	return Notification{}, false
}

// toolCards holds what a call's card shows once it finished, by call id,
// until shown: an applied edit's diff and texts, the call's one-line
// summary and its output. Owned by the conversation's goroutine; the
// turn's end clears it.
type toolCards struct {
	diffs     map[string]string
	edits     map[string]*EditNote
	summaries map[string]string
	outputs   map[string]toolOutput
}

func newToolCards() toolCards {
	return toolCards{diffs: map[string]string{}, edits: map[string]*EditNote{}, summaries: map[string]string{}, outputs: map[string]toolOutput{}}
}

// card is the card of a: the call's arguments while pending (read from
// m), and what it showed once finished (a child's answer: its result in
// m), taken out of c.
func (c *toolCards) card(a fsm.DisplayToolCall, m *fsm.Machine) *ToolNote {
	note := &ToolNote{CallID: a.CallID, Name: a.Name, Status: a.Status, Detail: a.Detail}
	if a.Status == fsm.ToolPending {
		note.Arguments = callArguments(m, a.CallID)
		if a.Arguments != "" {
			note.Arguments, note.Rewritten = a.Arguments, true
		}
	}
	finished := a.Status == fsm.ToolSucceeded || a.Status == fsm.ToolFailed
	if finished {
		note.Diff = c.diffs[a.CallID]
		delete(c.diffs, a.CallID)
		note.Edit = c.edits[a.CallID]
		delete(c.edits, a.CallID)
		if summary, ok := c.summaries[a.CallID]; ok {
			note.Detail = summary
			delete(c.summaries, a.CallID)
		}
	}
	if out, ok := c.outputs[a.CallID]; ok && a.Status != fsm.ToolPending && a.Status != fsm.ToolRunning {
		note.Output, note.ExitCode = out.text, out.exitCode
		delete(c.outputs, a.CallID)
	} else if a.Name == fsm.AgentTool && finished {
		note.Output = callResult(m, a.CallID) // the child's answer, as the model reads it
	}
	return note
}

// clear forgets what was not shown (the turn ended).
func (c *toolCards) clear() {
	clear(c.diffs)
	clear(c.edits)
	clear(c.summaries)
	clear(c.outputs)
}

// callResult returns the result of a completed call of m's current
// batch.
func callResult(m *fsm.Machine, id string) string {
	for _, x := range m.State().Executions {
		if x.Call.ID == id {
			return x.Result
		}
	}
	msgs := m.Messages() // the batch is over: its results are history
	for i := len(msgs) - 1; i >= 0 && i >= len(msgs)-64; i-- {
		if msgs[i].Role == fsm.RoleTool && msgs[i].ToolCallID == id {
			return msgs[i].Content
		}
	}
	return ""
}

// callArguments returns the arguments of a call of m's current batch.
func callArguments(m *fsm.Machine, id string) string {
	for _, x := range m.State().Executions {
		if x.Call.ID == id {
			return x.Call.Arguments
		}
	}
	return ""
}
