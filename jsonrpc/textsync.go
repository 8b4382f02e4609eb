package jsonrpc

import (
	"context"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/tools"
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
	s.host.Overlay().Open(path, p.TextDocument.Version, p.TextDocument.Text)
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
			r := toolsRange(c.Range)
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

func toolsRange(r protocol.Range) tools.Range {
	return tools.Range{
		Start: tools.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   tools.Position{Line: r.End.Line, Character: r.End.Character},
	}
}

func lspRange(r tools.Range) protocol.Range {
	return protocol.Range{
		Start: protocol.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   protocol.Position{Line: r.End.Line, Character: r.End.Character},
	}
}
