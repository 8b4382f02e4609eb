package fakeeditor

import (
	"context"
	"fmt"
	"os"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
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
		next, err := ApplyEdits(b.text, textEdits(tde.Edits))
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

// textEdits are a TextDocumentEdit's edits, annotated or not, as plain
// text edits.
func textEdits(els []protocol.TextDocumentEditElement) []protocol.TextEdit {
	var edits []protocol.TextEdit
	for _, el := range els {
		switch el := el.(type) {
		case *protocol.TextEdit:
			edits = append(edits, *el)
		case *protocol.AnnotatedTextEdit:
			edits = append(edits, el.TextEdit)
		}
	}
	return edits
}

// ApplyEdits applies the edits of one TextDocumentEdit to text, as an
// editor does (package lsppos: UTF-16 characters; lines end at "\n",
// "\r\n" or a lone "\r"; ranges must not overlap).
func ApplyEdits(text string, edits []protocol.TextEdit) (string, error) {
	converted := make([]lsppos.TextEdit, len(edits))
	for i, e := range edits {
		converted[i] = lsppos.TextEdit{Range: lspposRange(e.Range), NewText: e.NewText}
	}
	return lsppos.ApplyEdits(text, converted)
}

func lspposRange(r protocol.Range) lsppos.Range {
	return lsppos.Range{
		Start: lsppos.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   lsppos.Position{Line: r.End.Line, Character: r.End.Character},
	}
}
