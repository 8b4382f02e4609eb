package jsonrpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// didOpen records an opened document in the overlay.
func (s *Server) didOpen(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := decodeParams(protocol.MethodTextDocumentDidOpen, raw, &p); err != nil {
		return err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return err
	}
	s.host.Overlay().OpenURI(path, string(p.TextDocument.URI), p.TextDocument.Version, p.TextDocument.Text)
	return nil
}

// didChange applies full or incremental changes to an open document.
func (s *Server) didChange(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidChangeTextDocumentParams
	if err := decodeParams(protocol.MethodTextDocumentDidChange, raw, &p); err != nil {
		return err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return err
	}
	changes := make([]workspace.Change, 0, len(p.ContentChanges))
	for _, c := range p.ContentChanges {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangePartial:
			r := lspposRange(c.Range)
			changes = append(changes, workspace.Change{Range: &r, Text: c.Text})
		case *protocol.TextDocumentContentChangeWholeDocument:
			changes = append(changes, workspace.Change{Text: c.Text})
		}
	}
	return s.host.Overlay().Change(path, p.TextDocument.Version, changes)
}

// didSave records the save: the auto-commit leaves to the user a file
// saved while the agent's commands ran.
func (s *Server) didSave(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidSaveTextDocumentParams
	if err := decodeParams(protocol.MethodTextDocumentDidSave, raw, &p); err != nil {
		return err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return err
	}
	s.host.Overlay().Saved(path)
	return nil
}

// didClose drops a document from the overlay: tools read it from disk
// again.
func (s *Server) didClose(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := decodeParams(protocol.MethodTextDocumentDidClose, raw, &p); err != nil {
		return err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return err
	}
	s.host.Overlay().Close(path)
	return nil
}

// lspposRange converts a wire range to the project's position type.
func lspposRange(r protocol.Range) lsppos.Range {
	return lsppos.Range{
		Start: lsppos.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   lsppos.Position{Line: r.End.Line, Character: r.End.Character},
	}
}

// lspRange converts a range of the project's position type to the wire's.
func lspRange(r lsppos.Range) protocol.Range {
	return protocol.Range{
		Start: protocol.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   protocol.Position{Line: r.End.Line, Character: r.End.Character},
	}
}
