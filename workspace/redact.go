package workspace

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/loom-lsp/loom-lsp/secret"
)

// Secrets never leave through a session: every notification and approval
// sent to the editor (whatever the front end: LSP, ACP, headless), every
// log record and every journal line passes through the host's redactor,
// which masks the configured API keys' values and bearer tokens.

// redactingEditor is the Editor the sessions use: it masks secrets in
// what is shown to the user. Edits are passed as they are: they are the
// file's text, not something shown.
type redactingEditor struct {
	Editor
	r *secret.Redactor
}

// redactingStore is a redactingEditor whose editor is also a
// DocumentStore, which it stays (the sessions look for it).
type redactingStore struct {
	redactingEditor
	DocumentStore
}

// newRedactingEditor wraps e, keeping its optional interfaces.
func newRedactingEditor(e Editor, r *secret.Redactor) Editor {
	red := redactingEditor{Editor: e, r: r}
	if store, ok := e.(DocumentStore); ok {
		return redactingStore{red, store}
	}
	return red
}

// Notify implements Editor.
func (e redactingEditor) Notify(n Notification) {
	r := e.r
	n.Text = r.String(n.Text)
	if n.Tool != nil {
		t := *n.Tool
		t.Detail, t.Arguments, t.Diff = r.String(t.Detail), r.String(t.Arguments), r.String(t.Diff)
		t.Output = r.String(t.Output) // exec's JSONL and --verbose show it
		n.Tool = &t
	}
	if n.Commit != nil {
		c := *n.Commit
		c.Message = r.String(c.Message)
		n.Commit = &c
	}
	e.Editor.Notify(n)
}

// Approve implements Editor.
func (e redactingEditor) Approve(ctx context.Context, a Approval) (bool, error) {
	a.Detail = e.r.String(a.Detail)
	return e.Editor.Approve(ctx, a)
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
