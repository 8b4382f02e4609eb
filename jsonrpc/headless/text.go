package headless

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// textState is what text mode remembers between writes.
type textState struct {
	// atLineEnd is false while the assistant's text written to Out has
	// not ended its line.
	atLineEnd bool
	// progress is the progress line shown on Log, "" when none is.
	progress string
	// reasoning is set while the model's reasoning is being shown on
	// Log; reasoningAtLineEnd when its last piece ended its line.
	reasoning, reasoningAtLineEnd bool
}

// ANSI colours of text mode's side channel.
const (
	colorRed    = "31"
	colorGreen  = "32"
	colorYellow = "33"
	colorCyan   = "36"
	colorDim    = "2"
)

func (h *Editor) paint(code, s string) string {
	if !h.opts.Color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// textOut renders notifications in text mode: the answer on Out, the
// rest as short lines on Log. It runs under the editor's lock.
type textOut struct{ h *Editor }

var _ workspace.NoteHandler = textOut{}

// line writes a side line on Log, on a line of its own; "" writes none.
func (o textOut) line(line string) {
	if line == "" {
		return
	}
	o.h.endLine()
	o.h.write(o.h.opts.Log, line+"\n")
}

// TextDelta writes the answer's text on Out.
func (o textOut) TextDelta(n workspace.TextDelta) {
	h := o.h
	if n.Text == "" {
		return
	}
	h.message.WriteString(n.Text)
	h.write(h.opts.Out, n.Text)
	h.text.atLineEnd = strings.HasSuffix(n.Text, "\n")
}

// ReasoningDelta writes reasoning, when asked for (showReasoning).
func (o textOut) ReasoningDelta(n workspace.ReasoningDelta) { o.h.showReasoning(n.Text) }

// ToolUpdated writes the call's line (toolLine).
func (o textOut) ToolUpdated(n workspace.ToolUpdated) { o.line(o.h.toolLine(n.Call)) }

// Committed writes the commit and its notes.
func (o textOut) Committed(n workspace.Committed) {
	h := o.h
	subject, _, _ := strings.Cut(n.Commit.Message, "\n")
	line := h.paint(colorYellow, fmt.Sprintf("● committed %.7s", n.Commit.SHA)) + " " + subject
	for _, note := range n.Commit.Notes {
		line += "\n  " + h.paint(colorDim, "· "+note)
	}
	o.line(line)
}

// RetryScheduled writes the retry.
func (o textOut) RetryScheduled(n workspace.RetryScheduled) {
	o.line(o.h.paint(colorYellow, "↻ "+n.Words()))
}

// ErrorReported writes the error.
func (o textOut) ErrorReported(n workspace.ErrorReported) {
	o.line(o.h.paint(colorRed, "error: ") + n.Text)
}

// CommandsChanged writes each changed file, with its diff.
func (o textOut) CommandsChanged(n workspace.CommandsChanged) {
	h := o.h
	var b strings.Builder
	for i, c := range n.Changes {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(h.paint(colorYellow, "● changed by `"+c.Command+"` — not committed: "+c.Rel) + " (keep: loom-lsp exec cannot; commit it with git, or discard it with git restore)")
		if c.Diff != "" {
			b.WriteString("\n" + h.paint(colorDim, strings.TrimRight(c.Diff, "\n")))
		}
	}
	o.line(b.String())
}

// InfoReported writes the information, dimmed.
func (o textOut) InfoReported(n workspace.InfoReported) { o.line(o.h.paint(colorDim, "· "+n.Text)) }

// HookReported writes what the hook said; yellow when it stopped
// something, failed or was held back.
func (o textOut) HookReported(n workspace.HookReported) {
	color := colorDim
	if hk := n.Hook; hk.Decision == "deny" || hk.Decision == "block" || hk.Problem != "" || hk.Held != "" {
		color = colorYellow
	}
	o.line(o.h.paint(color, "⚑ "+n.Hook.Line()))
}

// ModeChanged writes the mode.
func (o textOut) ModeChanged(n workspace.ModeChanged) {
	o.line(o.h.paint(colorCyan, "◇ mode: "+string(n.Mode)))
}

// PlanChanged writes the todo list on one line.
func (o textOut) PlanChanged(n workspace.PlanChanged) {
	o.line(o.h.paint(colorCyan, "☰ plan: ") + workspace.PlanLine(n.Plan))
}

// PlanProposed writes the plan to the output, like an answer.
func (o textOut) PlanProposed(n workspace.PlanProposed) {
	h := o.h
	h.endLine()
	h.write(h.opts.Log, h.paint(colorYellow, "◆ proposed plan (waiting for approval):")+"\n")
	h.write(h.opts.Out, strings.TrimRight(n.Plan, "\n")+"\n")
}

// ChangeProposed writes the patch to the output, where a script
// collects it.
func (o textOut) ChangeProposed(n workspace.ChangeProposed) {
	h := o.h
	h.endLine()
	for _, c := range n.Proposal.Changes {
		h.write(h.opts.Log, h.paint(colorYellow, "◆ proposed (not written): "+c.Path)+"\n")
		h.write(h.opts.Out, c.Diff)
	}
}

// TurnEnded writes the turn's usage.
func (o textOut) TurnEnded(n workspace.TurnEnded) {
	h := o.h
	h.endLine()
	if line := h.usageLine(n.Usage); line != "" {
		h.write(h.opts.Log, line+"\n")
	}
}

// The notes text mode does not write.

func (textOut) TurnStarted(workspace.TurnStarted)                 {}
func (textOut) TextRetracted(workspace.TextRetracted)             {}
func (textOut) StateChanged(workspace.StateChanged)               {}
func (textOut) Compacted(workspace.Compacted)                     {}
func (textOut) Rewound(workspace.Rewound)                         {}
func (textOut) DiagnosticsReported(workspace.DiagnosticsReported) {}
func (textOut) SubagentChanged(workspace.SubagentChanged)         {}
func (textOut) TitleChanged(workspace.TitleChanged)               {}

// toolLine is the side-channel line of a tool note, "" for none.
func (h *Editor) toolLine(t *workspace.ToolNote) string {
	detail := strings.TrimPrefix(t.Detail, t.Name+": ")
	switch t.Status {
	case fsm.ToolPending:
		line := h.paint(colorCyan, "▸ "+t.Name) + " " + clip(t.Arguments, 120)
		if t.Rewritten {
			line += " (" + fsm.RewrittenWords + ")"
		}
		return line
	case fsm.ToolSucceeded:
		line := h.paint(colorGreen, "✓ "+t.Name+":") + " " + clip(detail, 120)
		if t.Diff != "" {
			line += "\n" + h.paintDiff(strings.TrimRight(t.Diff, "\n"))
		}
		return line + h.outputLines(t)
	case fsm.ToolFailed:
		return h.paint(colorRed, "✗ "+t.Name+":") + " " + clip(detail, 200) + h.outputLines(t)
	case fsm.ToolCancelled:
		return h.paint(colorRed, "✗ "+t.Name+": cancelled")
	}
	return ""
}

// outputLines is a command's output under its tool line, when asked for.
func (h *Editor) outputLines(t *workspace.ToolNote) string {
	if !h.opts.ShowOutput || t.ExitCode == nil || t.Output == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(t.Output, "\n"), "\n") {
		b.WriteString("\n" + h.paint(colorDim, "  │ ") + l)
	}
	return b.String()
}

func (h *Editor) paintDiff(diff string) string {
	if !h.opts.Color {
		return diff
	}
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = h.paint("1", l)
		case strings.HasPrefix(l, "+"):
			lines[i] = h.paint(colorGreen, l)
		case strings.HasPrefix(l, "-"):
			lines[i] = h.paint(colorRed, l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = h.paint(colorCyan, l)
		}
	}
	return strings.Join(lines, "\n")
}

// endLine ends the assistant's line on Out, if it is open: a message,
// or a side line, starts on a line of its own.
func (h *Editor) endLine() {
	if !h.text.atLineEnd {
		h.text.atLineEnd = true
		h.write(h.opts.Out, "\n")
	}
}

// progressQuiet is how long nothing was printed before the progress line
// appears.
const progressQuiet = time.Second

// showProgress shows or refreshes the progress line, saying what the turn
// waits for, once nothing was printed for progressQuiet.
func (h *Editor) showProgress(now time.Time) {
	if h.writeErr != nil || now.Sub(h.lastWrite) < progressQuiet {
		return
	}
	status := h.waitingFor(now)
	if status == "" || status == h.text.progress {
		return
	}
	if !h.text.atLineEnd {
		h.endLine() // the model stalled mid-line: the status goes below
	}
	h.endReasoningLine()
	h.text.progress = status
	io.WriteString(h.opts.Log, "\r\x1b[K"+h.paint(colorDim, "… "+status))
}

// clearProgress erases the progress line before anything else is
// written.
func (h *Editor) clearProgress() {
	if h.text.progress == "" {
		return
	}
	h.text.progress = ""
	io.WriteString(h.opts.Log, "\r\x1b[K")
}

// waitingFor says what the turn waits for, "" for nothing worth saying.
func (h *Editor) waitingFor(now time.Time) string {
	secs := func(since time.Time) string {
		return fmt.Sprintf("%ds", int(now.Sub(since).Round(time.Second).Seconds()))
	}
	if now.Before(h.retryAt) {
		return fmt.Sprintf("retrying in %ds", int(h.retryAt.Sub(now).Seconds()+0.999))
	}
	var oldest *runningTool
	for _, t := range h.running {
		if oldest == nil || t.started.Before(oldest.started) {
			oldest = t
		}
	}
	switch {
	case oldest != nil && oldest.detail != "":
		return fmt.Sprintf("running %s: %s (%s)", oldest.name, clip(oldest.detail, 60), secs(oldest.started))
	case oldest != nil:
		return fmt.Sprintf("running %s (%s)", oldest.name, secs(oldest.started))
	case h.state == fsm.CallingLlm.String():
		return fmt.Sprintf("waiting for the model (%s)", secs(h.stateAt))
	case h.state == fsm.PostToolsHook.String():
		return fmt.Sprintf("committing (%s)", secs(h.stateAt))
	}
	return ""
}

// PlanLine is the todo list on one line (workspace.PlanLine).
func PlanLine(items []fsm.PlanItem) string { return workspace.PlanLine(items) }
