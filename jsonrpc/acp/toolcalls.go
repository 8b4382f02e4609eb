package acp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// maxToolOutput caps the text of a tool result shown in a tool call's
// content; the model still reads all of it.
const maxToolOutput = 16 << 10

// toolView is how a tool call shows in the client: its kind, a human
// title and the files it is about.
type toolView struct {
	kind      acpsdk.ToolKind
	title     string
	locations []acpsdk.ToolCallLocation
	rawInput  any
}

// viewTool describes a call of tool name with its JSON arguments, in the
// workspace folder: its kind, title and file are workspace.ViewTool's.
func viewTool(folder, name, arguments string) toolView {
	var raw any
	if json.Unmarshal([]byte(arguments), &raw) != nil && arguments != "" {
		raw = arguments
	}
	w := workspace.ViewTool(name, arguments)
	v := toolView{kind: acpsdk.ToolKind(w.Kind), title: w.Title, rawInput: raw}
	if w.Path != "" {
		loc := acpsdk.ToolCallLocation{Path: absPath(folder, w.Path)}
		if w.Line > 0 {
			loc.Line = acpsdk.Ptr(w.Line)
		}
		v.locations = []acpsdk.ToolCallLocation{loc}
	}
	return v
}

func absPath(folder, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(folder, filepath.FromSlash(p))
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// startUpdate announces a tool call.
func startUpdate(id string, v toolView, status acpsdk.ToolCallStatus) acpsdk.SessionUpdate {
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(v.kind), acpsdk.WithStartStatus(status)}
	if len(v.locations) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(v.locations))
	}
	if v.rawInput != nil {
		opts = append(opts, acpsdk.WithStartRawInput(v.rawInput))
	}
	return acpsdk.StartToolCall(acpsdk.ToolCallId(id), v.title, opts...)
}

// finalStatus maps a finished call's status to ACP's.
func finalStatus(s fsm.ToolStatus) acpsdk.ToolCallStatus {
	if s == fsm.ToolSucceeded {
		return acpsdk.ToolCallStatusCompleted
	}
	return acpsdk.ToolCallStatusFailed
}

// finishUpdate closes a tool call: its status, its output as text and,
// for an edit, a diff item and the line of the first change.
func finishUpdate(t *workspace.ToolNote) acpsdk.SessionUpdate {
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(finalStatus(t.Status))}
	var content []acpsdk.ToolCallContent
	text := t.Output
	if text == "" {
		text = t.Detail
	}
	if t.Status == fsm.ToolCancelled && text == "" {
		text = "cancelled"
	}
	if text != "" {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(clipOutput(text))))
	}
	if e := t.Edit; e != nil {
		if e.Created {
			content = append(content, acpsdk.ToolDiffContent(e.Path, e.NewText))
		} else {
			content = append(content, acpsdk.ToolDiffContent(e.Path, e.NewText, e.OldText))
		}
		opts = append(opts, acpsdk.WithUpdateLocations([]acpsdk.ToolCallLocation{{Path: e.Path, Line: acpsdk.Ptr(firstChangedLine(e.OldText, e.NewText))}}))
	}
	if len(content) > 0 {
		opts = append(opts, acpsdk.WithUpdateContent(content))
	}
	return acpsdk.UpdateToolCall(acpsdk.ToolCallId(t.CallID), opts...)
}

// firstChangedLine is the 1-based line of new where it first differs
// from old.
func firstChangedLine(old, new string) int {
	n := 0
	for n < len(old) && n < len(new) && old[n] == new[n] {
		n++
	}
	return strings.Count(new[:n], "\n") + 1
}

func clipOutput(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return s[:maxToolOutput] + fmt.Sprintf("\n… (%d more bytes)", len(s)-maxToolOutput)
}

// historyUpdates turns a conversation into the updates that redraw it
// (session/load): the prompts, the answers, and each tool call with its
// final status and result.
func historyUpdates(folder string, msgs []fsm.Message) []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, m := range msgs {
		switch m.Role {
		case fsm.RoleUser:
			if m.Note {
				// loom's own note to the model (files changed on disk, a
				// rewind): the agent's side, never a prompt of the user.
				out = append(out, acpsdk.UpdateAgentMessageText(m.Content))
				continue
			}
			prompt, chips := workspace.SplitPrompt(m.Content)
			if prompt != "" {
				out = append(out, acpsdk.UpdateUserMessageText(prompt))
			}
			for _, c := range chips {
				if c.Path != "" {
					out = append(out, acpsdk.UpdateUserMessage(acpsdk.ResourceLinkBlock(c.Label, (&url.URL{Scheme: "file", Path: c.Path}).String())))
				} else {
					out = append(out, acpsdk.UpdateUserMessageText("["+c.Label+"]"))
				}
			}
		case fsm.RoleAssistant:
			if m.Content != "" {
				out = append(out, acpsdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				out = append(out, startUpdate(c.ID, viewTool(folder, c.Name, c.Arguments), acpsdk.ToolCallStatusPending))
			}
		case fsm.RoleTool:
			status := fsm.ToolSucceeded
			if strings.HasPrefix(m.Content, "tool error:") {
				status = fsm.ToolFailed
			}
			out = append(out, finishUpdate(&workspace.ToolNote{CallID: m.ToolCallID, Status: status, Output: m.Content}))
		}
	}
	return out
}
