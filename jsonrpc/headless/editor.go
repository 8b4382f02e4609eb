// Package headless is the front end of `loom-lsp exec` and the demo: a
// workspace.Editor that writes a session's progress as text or JSON lines.
package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Format is the output of an Editor.
type Format string

// The headless output formats.
const (
	// Text prints the assistant's text as it streams; tool calls,
	// commits, retries and errors go to the log writer as short lines.
	Text Format = "text"
	// JSONL prints one JSON event per line (see Event).
	JSONL Format = "jsonl"
)

// Event is one line of the JSONL output of `loom-lsp exec`. Every
// event has a Type; the other fields depend on it:
//
//	turn_started     folder, turn, prompt
//	message_delta    turn, text
//	tool_started     turn, id, name, arguments
//	tool_progress    turn, id, name, message
//	tool_completed   turn, id, name, status (succeeded|failed|cancelled), summary, diff (edits)
//	commit           turn, sha, files, message
//	retry_scheduled  turn, delay_ms, reason
//	error            turn, message, kind (model errors)
//	info             turn, message
//	turn_completed   turn, outcome (done|failed|cancelled), usage
type Event struct {
	Type      string     `json:"type"`
	Folder    string     `json:"folder,omitempty"`
	Turn      uint64     `json:"turn,omitempty"`
	Prompt    string     `json:"prompt,omitempty"`
	Text      string     `json:"text,omitempty"`
	ID        string     `json:"id,omitempty"`
	Name      string     `json:"name,omitempty"`
	Arguments string     `json:"arguments,omitempty"`
	Status    string     `json:"status,omitempty"`
	Message   string     `json:"message,omitempty"`
	Summary   string     `json:"summary,omitempty"`
	Diff      string     `json:"diff,omitempty"`
	SHA       string     `json:"sha,omitempty"`
	Files     []string   `json:"files,omitempty"`
	DelayMS   int64      `json:"delay_ms,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Kind      string     `json:"kind,omitempty"`
	Outcome   string     `json:"outcome,omitempty"`
	Usage     *fsm.Usage `json:"usage,omitempty"`
}

// Editor is the workspace.Editor of `loom-lsp exec` and the demo:
// it writes the session's notifications to out, can apply no edit itself
// (edits go to disk), and has no one to ask (bash under "ask" is refused).
type Editor struct {
	format Format
	out    io.Writer // the chosen output
	log    io.Writer // text mode's side channel

	mu        sync.Mutex
	cond      *sync.Cond
	ended     map[uint64]workspace.Notification // turn -> its turn_ended
	lastError map[uint64]workspace.Notification // turn -> its last error
	atLineEnd bool
	writeErr  error         // the first failed write to out or log
	broken    chan struct{} // closed on the first failed write
}

// NewEditor returns an editor writing format to out; in text mode
// the lines about tools, commits and errors go to log.
func NewEditor(format Format, out, log io.Writer) *Editor {
	h := &Editor{format: format, out: out, log: log, atLineEnd: true, broken: make(chan struct{}),
		ended: map[uint64]workspace.Notification{}, lastError: map[uint64]workspace.Notification{}}
	h.cond = sync.NewCond(&h.mu)
	return h
}

// Notify implements workspace.Editor.
func (h *Editor) Notify(n workspace.Notification) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.format == JSONL {
		if ev, ok := eventOf(n); ok {
			b, _ := json.Marshal(ev)
			h.write(h.out, string(append(b, '\n')))
		}
	} else {
		h.writeText(n)
	}
	switch n.Kind {
	case workspace.NoteError:
		h.lastError[n.Turn] = n
	case workspace.NoteTurnEnded:
		h.ended[n.Turn] = n
		h.cond.Broadcast()
	}
}

// headlessEvent maps a notification to its JSONL event.
func eventOf(n workspace.Notification) (Event, bool) {
	ev := Event{Turn: n.Turn}
	switch n.Kind {
	case workspace.NoteTurnStarted:
		ev.Type, ev.Folder, ev.Prompt = "turn_started", n.Folder, n.Text
	case workspace.NoteText:
		ev.Type, ev.Text = "message_delta", n.Text
	case workspace.NoteTool:
		t := n.Tool
		ev.ID, ev.Name = t.CallID, t.Name
		switch t.Status {
		case fsm.ToolPending:
			ev.Type, ev.Arguments = "tool_started", t.Arguments
		case fsm.ToolRunning:
			ev.Type, ev.Message = "tool_progress", t.Detail
		case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
			ev.Type, ev.Status, ev.Summary, ev.Diff = "tool_completed", string(t.Status), t.Detail, t.Diff
		default:
			return ev, false // streaming: the call is not complete yet
		}
	case workspace.NoteCommit:
		ev.Type, ev.SHA, ev.Files, ev.Message = "commit", n.Commit.SHA, n.Commit.Files, n.Commit.Message
	case workspace.NoteRetry:
		ev.Type, ev.DelayMS, ev.Reason = "retry_scheduled", n.Delay.Milliseconds(), n.Text
	case workspace.NoteError:
		ev.Type, ev.Message, ev.Kind = "error", n.Text, string(n.ErrorKind)
	case workspace.NoteInfo:
		ev.Type, ev.Message = "info", n.Text
	case workspace.NoteTurnEnded:
		usage := n.Usage
		ev.Type, ev.Outcome, ev.Usage = "turn_completed", string(n.Outcome), &usage
	default:
		return ev, false
	}
	return ev, true
}

// writeText renders a notification in text mode.
func (h *Editor) writeText(n workspace.Notification) {
	line := ""
	switch n.Kind {
	case workspace.NoteText:
		h.write(h.out, n.Text)
		if n.Text != "" {
			h.atLineEnd = strings.HasSuffix(n.Text, "\n")
		}
		return
	case workspace.NoteTool:
		t := n.Tool
		switch t.Status {
		case fsm.ToolPending:
			line = fmt.Sprintf("▸ %s %s", t.Name, clip(t.Arguments, 120))
		case fsm.ToolSucceeded:
			line = fmt.Sprintf("✓ %s: %s", t.Name, clip(strings.TrimPrefix(t.Detail, t.Name+": "), 120))
			if t.Diff != "" {
				line += "\n" + strings.TrimRight(t.Diff, "\n")
			}
		case fsm.ToolFailed:
			line = fmt.Sprintf("✗ %s: %s", t.Name, clip(strings.TrimPrefix(t.Detail, t.Name+": "), 200))
		case fsm.ToolCancelled:
			line = fmt.Sprintf("✗ %s: cancelled", t.Name)
		default:
			return
		}
	case workspace.NoteCommit:
		subject, _, _ := strings.Cut(n.Commit.Message, "\n")
		line = fmt.Sprintf("● committed %.7s %s", n.Commit.SHA, subject)
	case workspace.NoteRetry:
		line = "↻ " + workspace.RetryWords(n.Delay, n.Text)
	case workspace.NoteError:
		line = "error: " + n.Text
	case workspace.NoteInfo:
		line = "· " + n.Text
	case workspace.NoteTurnEnded:
		if !h.atLineEnd {
			h.write(h.out, "\n")
			h.atLineEnd = true
		}
		return
	default:
		return
	}
	if !h.atLineEnd && h.log == h.out {
		h.write(h.out, "\n")
	}
	h.atLineEnd = true
	h.write(h.log, line+"\n")
}

// write writes s to w; the first failure (a closed pipe) is kept and
// closes Broken, so the caller can stop the turn nobody reads any more.
func (h *Editor) write(w io.Writer, s string) {
	if h.writeErr != nil {
		return
	}
	if _, err := io.WriteString(w, s); err != nil {
		h.writeErr = err
		close(h.broken)
	}
}

// OutputGone records that nobody reads the output any more (the caller
// saw the reader of a pipe go away) and closes Broken.
func (h *Editor) OutputGone() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writeErr == nil {
		h.writeErr = io.ErrClosedPipe
		close(h.broken)
	}
}

// Broken is closed once a write to the output failed, e.g. because the
// reader of a pipe went away, or OutputGone was called.
func (h *Editor) Broken() <-chan struct{} { return h.broken }

// Forget drops what the editor recorded of ended turns, so that WaitTurn
// only sees turns that end from now on (a resumed conversation closes its
// interrupted turn before the caller asks anything).
func (h *Editor) Forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.ended)
	clear(h.lastError)
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// WaitTurn blocks until turn ends (or ctx is done) and returns its
// turn_ended notification and the last error notification of the turn.
func (h *Editor) WaitTurn(ctx context.Context, turn uint64) (ended, lastErr workspace.Notification, err error) {
	stop := context.AfterFunc(ctx, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	defer stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if n, ok := h.ended[turn]; ok {
			return n, h.lastError[turn], nil
		}
		if ctx.Err() != nil {
			return workspace.Notification{}, workspace.Notification{}, ctx.Err()
		}
		h.cond.Wait()
	}
}

// ApplyEdit implements workspace.Editor: headless, edits go to disk.
func (h *Editor) ApplyEdit(context.Context, workspace.DocumentEdit) error {
	return workspace.ErrUnsupported
}

// Approve implements workspace.Editor: headless, there is no one to ask.
func (h *Editor) Approve(context.Context, workspace.Approval) (bool, error) {
	return false, workspace.ErrUnsupported
}

// SaveDocuments implements workspace.Editor: headless, nothing is open.
func (h *Editor) SaveDocuments(context.Context, []string) ([]string, error) {
	return nil, workspace.ErrUnsupported
}
