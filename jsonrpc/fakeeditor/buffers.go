package fakeeditor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// OpenFile opens path with its text on disk (version 1) and sends didOpen.
func (e *Editor) OpenFile(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.buffers[path] = &buffer{text: string(b), version: 1}
	e.mu.Unlock()
	return e.Notify(ctx, protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{
		TextDocument: protocol.TextDocumentItem{URI: uri.File(path), LanguageID: "plaintext", Version: 1, Text: string(b)},
	})
}

// CloseFile closes path's buffer and sends didClose.
func (e *Editor) CloseFile(ctx context.Context, path string) error {
	e.mu.Lock()
	delete(e.buffers, path)
	e.mu.Unlock()
	return e.Notify(ctx, protocol.MethodTextDocumentDidClose, &protocol.DidCloseTextDocumentParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)},
	})
}

// EditBuffer replaces r of path's buffer with text, the way a user types,
// and sends an incremental didChange with the next version.
func (e *Editor) EditBuffer(ctx context.Context, path string, r protocol.Range, text string) error {
	e.mu.Lock()
	b := e.buffers[path]
	if b == nil {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", path)
	}
	next, err := ApplyEdits(b.text, []protocol.TextEdit{{Range: r, NewText: text}})
	if err != nil {
		e.mu.Unlock()
		return err
	}
	b.text = next
	b.version++
	version := b.version
	e.mu.Unlock()
	return e.Notify(ctx, protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{Range: r, Text: text}},
	})
}

// BufferText returns path's buffer text and version.
func (e *Editor) BufferText(path string) (string, int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.buffers[path]
	if b == nil {
		return "", 0, false
	}
	return b.text, b.version, true
}

// applyEdit answers workspace/applyEdit like a real editor: each
// TextDocumentEdit applies only when its version is the buffer's; the
// buffer then gets a new version, announced with a full didChange.
func (e *Editor) applyEdit(ctx context.Context, p *protocol.ApplyWorkspaceEditParams) *protocol.ApplyWorkspaceEditResult {
	fail := func(reason string) *protocol.ApplyWorkspaceEditResult {
		return &protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: &reason}
	}
	type change struct {
		path    string
		text    string
		version int32
	}
	var changes []change
	e.mu.Lock()
	if e.cfg.Unversioned {
		// Like a client without documentChanges: only "changes" count.
		for u, edits := range p.Edit.Changes {
			b := e.buffers[u.FsPath()]
			if b == nil {
				e.mu.Unlock()
				return fail(u.FsPath() + " is not open")
			}
			next, err := ApplyEdits(b.text, edits)
			if err != nil {
				e.mu.Unlock()
				return fail(err.Error())
			}
			b.text = next
			b.version++
			changes = append(changes, change{u.FsPath(), next, b.version})
		}
		p.Edit.DocumentChanges = nil
	} else if len(p.Edit.DocumentChanges) == 0 {
		e.mu.Unlock()
		return fail("no documentChanges")
	}
	for _, dc := range p.Edit.DocumentChanges {
		tde, ok := dc.(*protocol.TextDocumentEdit)
		if !ok {
			e.mu.Unlock()
			return fail(fmt.Sprintf("unsupported document change %T", dc))
		}
		path := tde.TextDocument.URI.FsPath()
		b := e.buffers[path]
		if b == nil {
			e.mu.Unlock()
			return fail(path + " is not open")
		}
		if tde.TextDocument.Version == nil || *tde.TextDocument.Version != b.version {
			e.mu.Unlock()
			return fail(fmt.Sprintf("version mismatch: the document is at version %d", b.version))
		}
		var edits []protocol.TextEdit
		for _, el := range tde.Edits {
			switch el := el.(type) {
			case *protocol.TextEdit:
				edits = append(edits, *el)
			case *protocol.AnnotatedTextEdit:
				edits = append(edits, el.TextEdit)
			}
		}
		next, err := ApplyEdits(b.text, edits)
		if err != nil {
			e.mu.Unlock()
			return fail(err.Error())
		}
		b.text = next
		b.version++
		changes = append(changes, change{path, next, b.version})
	}
	e.mu.Unlock()
	for _, c := range changes {
		_ = e.Notify(ctx, protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(c.path)}, Version: c.version},
			ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: c.text}},
		})
	}
	return &protocol.ApplyWorkspaceEditResult{Applied: true}
}

// ApplyEdits applies non-overlapping LSP edits to text.
func ApplyEdits(text string, edits []protocol.TextEdit) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, 0, len(edits))
	for _, ed := range edits {
		s, err := Offset(text, ed.Range.Start)
		if err != nil {
			return "", err
		}
		en, err := Offset(text, ed.Range.End)
		if err != nil {
			return "", err
		}
		spans = append(spans, span{s, en, ed.NewText})
	}
	// Apply from the last edit backwards so offsets stay valid.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].start > spans[j-1].start; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	for _, sp := range spans {
		if sp.end < sp.start {
			return "", fmt.Errorf("edit range ends before it starts")
		}
		text = text[:sp.start] + sp.text + text[sp.end:]
	}
	return text, nil
}

// Offset returns the byte offset of an LSP position in text.
func Offset(text string, p protocol.Position) (int, error) {
	off := 0
	for line := uint32(0); line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end", p.Line)
		}
		off += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		end = off + i
	}
	for units := uint32(0); off < end && units < p.Character; {
		r, size := utf8.DecodeRuneInString(text[off:])
		units += uint32(utf16.RuneLen(r))
		off += size
	}
	return off, nil
}
