package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// Secrets never leave through a session: every notification and approval
// sent to the editor (whatever the front end: LSP, ACP, headless), every
// log record and every journal line passes through the host's redactor,
// which masks the configured API keys' values and bearer tokens. The
// Editor itself is not wrapped (its optional interfaces, such as
// DocumentStore, stay visible): the choke points are the conversation's
// out (out.go: notify and approve), the journal's writer and the logger's handler.
//
// The model's text arrives in deltas, and a key the model echoes (or a
// 401 body streamed in fragments) may be cut between two of them or more:
// a Stream per session and streamed kind (answer, reasoning) masks
// across the cuts, holding back only a tail that may begin a secret until
// the next delta, or until a notification that ends the streamed message.

// streamedKinds are the notifications whose Text is a piece of a text
// the model streams, each masked by a Stream of its own, in the order
// their held-back ends are flushed.
var streamedKinds = []NotificationKind{NoteReasoning, NoteText}

// shownText masks one streamed kind's text: mask holds back what may
// begin a secret, of turn's text.
type shownText struct {
	kind NotificationKind
	mask *secret.Stream
	turn uint64
}

// shownTexts are a conversation's shownText, one per streamed kind.
type shownTexts []*shownText

// newShownTexts returns a shownText for each streamed kind.
func newShownTexts(r *secret.Redactor) shownTexts {
	shown := make(shownTexts, len(streamedKinds))
	for i, k := range streamedKinds {
		shown[i] = &shownText{kind: k, mask: r.Stream()}
	}
	return shown
}

// endsMessage reports whether n, which is no streamed text, ends the
// message streaming, if any. What may come in its middle does not: a
// state change, a tool call the model is still streaming, and side notes
// (information, and errors that are not the model's, such as an MCP
// server's); the text held back goes on after them, so that a secret cut
// around them is still masked.
func endsMessage(n Notification) bool {
	switch n.Kind {
	case NoteState, NoteInfo:
		return false
	case NoteError:
		return n.ErrorKind != ""
	case NoteTool:
		return n.Tool == nil || n.Tool.Status != fsm.ToolStreaming
	}
	return true
}

// flush sends to ed what st held back, if anything, as the end of its
// text in the conversation id of folder.
func (st *shownText) flush(ed Editor, folder, id string) {
	if text := st.mask.Flush(); text != "" {
		ed.Notify(Notification{Folder: folder, Conversation: id, Turn: st.turn, Kind: st.kind, Text: text})
	}
}

// flush flushes every streamed kind's text.
func (ss shownTexts) flush(ed Editor, folder, id string) {
	for _, st := range ss {
		st.flush(ed, folder, id)
	}
}

// redactNote returns n with every text it shows masked. An edit's texts
// (EditNote) are passed as they are: they are the file's text, which a
// client may apply, not something only shown.
func redactNote(r *secret.Redactor, n Notification) Notification {
	n.Text = r.String(n.Text)
	if n.Tool != nil {
		t := *n.Tool
		t.Detail, t.Arguments = r.String(t.Detail), r.String(t.Arguments)
		t.Diff, t.Output = r.String(t.Diff), r.String(t.Output)
		n.Tool = &t
	}
	if n.Changes != nil {
		changes := make([]CommandChange, len(n.Changes))
		for i, c := range n.Changes {
			c.Command, c.Diff = r.String(c.Command), r.String(c.Diff)
			changes[i] = c
		}
		n.Changes = changes
	}
	if n.Commit != nil {
		c := *n.Commit
		c.Message = r.String(c.Message)
		c.Notes = make([]string, len(n.Commit.Notes))
		for i, note := range n.Commit.Notes {
			c.Notes[i] = r.String(note)
		}
		n.Commit = &c
	}
	return n
}

// rejectedForLog is what a log record tells of err, the machine's refusal
// of ev: a streamed fragment, which may be part of a secret the log's
// redaction cannot recognise, is left out.
func rejectedForLog(ev fsm.Event, err error) string {
	var short string
	switch e := ev.(type) {
	case fsm.LlmTextDelta:
		short = fmt.Sprintf("LlmTextDelta(request %d, %d bytes)", e.Request, len(e.Text))
	case fsm.LlmReasoningDelta:
		short = fmt.Sprintf("LlmReasoningDelta(request %d, %d bytes)", e.Request, len(e.Text))
	case fsm.LlmToolCallDelta:
		short = fmt.Sprintf("LlmToolCallDelta(request %d, index %d, %d bytes of arguments)", e.Request, e.Index, len(e.ArgumentsDelta))
	default:
		return err.Error()
	}
	return strings.Replace(err.Error(), ev.Describe(), short, 1)
}

// redactingHandler masks secrets in log records: their message and every
// attribute, formatted as text.
type redactingHandler struct {
	slog.Handler
	r *secret.Redactor
}

// Handle implements slog.Handler.
func (h redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return redactingHandler{h.Handler.WithAttrs(red), h.r}
}

// WithGroup implements slog.Handler.
func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.Handler.WithGroup(name), h.r}
}

func (h redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindAny:
		return slog.String(a.Key, h.r.String(fmt.Sprint(v.Any())))
	case slog.KindGroup:
		group := v.Group()
		red := make([]any, len(group))
		for i, g := range group {
			red[i] = h.attr(g)
		}
		return slog.Group(a.Key, red...)
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactMessages is a copy of msgs with the secrets the user configured
// redacted by r.
func redactMessages(r *secret.Redactor, in []fsm.Message) []fsm.Message {
	msgs := append([]fsm.Message(nil), in...)
	for i, m := range msgs {
		msgs[i].Content = r.String(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := append([]fsm.ToolCall(nil), m.ToolCalls...)
			for j := range calls {
				calls[j].Arguments = r.String(calls[j].Arguments)
			}
			msgs[i].ToolCalls = calls
		}
	}
	return msgs
}
