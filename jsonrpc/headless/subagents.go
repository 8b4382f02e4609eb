package headless

import (
	"fmt"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// A subagent's notifications (Notification.Subagent set) belong to a
// child conversation: its turns are its own, so they never count as the
// parent's. JSONL gives three events, each with the parent's turn and
// agent call id:
//
//	subagent_started    turn, id, subagent (child, agent, task, depth, readOnly)
//	subagent_update     turn, id, subagent, name, status, summary: a tool
//	                    call of the child started, waits or ended
//	subagent_completed  turn, id, subagent (state completed|failed|cancelled,
//	                    usage)
//
// Text mode prints a dimmed line for each.

// showSubagent shows a child's notification; it reports false for a
// notification of the conversation itself.
func (h *Editor) showSubagent(n workspace.Note) bool {
	info := n.Source().Subagent
	if info == nil {
		return false
	}
	ev := Event{Turn: info.Turn, ID: info.CallID, Subagent: info}
	tool, isTool := n.(workspace.ToolUpdated)
	_, isSubagent := n.(workspace.SubagentChanged)
	switch {
	case isSubagent && info.Activity != "":
		return true // an update: the child's own tool calls below say it
	case isSubagent && info.State == "running":
		ev.Type = "subagent_started"
	case isSubagent:
		ev.Type = "subagent_completed"
	case isTool && tool.Call.Status != fsm.ToolStreaming:
		ev.Type, ev.Name, ev.Status, ev.Summary = "subagent_update", tool.Call.Name, string(tool.Call.Status), tool.Call.Detail
	default:
		return true // the child's text, state and turns: in its journal
	}
	if h.opts.Format == JSONL {
		h.writeEvent(ev)
		return true
	}
	h.endMessage(h.turn)
	line := "⤷ " + info.Words()
	switch ev.Type {
	case "subagent_started":
		line += " started"
	case "subagent_completed":
		line += " " + info.State
		if info.Usage != nil {
			line += fmt.Sprintf(" (%d tokens)", info.Usage.TotalTokens)
		}
	default:
		line += ": " + ev.Name + " " + ev.Status
		if ev.Summary != "" {
			line += " · " + ev.Summary
		}
	}
	h.endLine()
	h.write(h.opts.Log, h.paint(colorDim, line)+"\n")
	return true
}
