package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// editor is the server's workspace.Editor: the sessions' way out to the
// LSP client.
type editor struct{ s *Server }

var _ workspace.Editor = (*editor)(nil)

// Notify queues n on its folder's outbox; it never blocks. After the
// teardown has started, n is dropped.
func (e *editor) Notify(n workspace.Notification) {
	if b := e.s.outboxFor(n.Folder); b != nil {
		b.push(n)
	} else {
		e.s.log.Debug("dropped a notification after teardown", "folder", n.Folder, "kind", n.Kind)
	}
}

// outboxFor returns the folder's outbox, starting it if needed, or nil
// once the teardown has collected the outboxes: an outbox started then
// would never be closed, and the teardown would wait for it forever.
func (s *Server) outboxFor(folder string) *outbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.outboxes[folder]; ok {
		return b
	}
	if s.tornDown {
		return nil
	}
	b := newOutbox(s, folder)
	s.outboxes[folder] = b
	s.goBackground(b.run)
	return b
}

// closeOutbox closes a removed folder's outbox without waiting: it
// drains on its own goroutine.
func (s *Server) closeOutbox(folder string) {
	s.mu.Lock()
	b := s.outboxes[folder]
	delete(s.outboxes, folder)
	s.mu.Unlock()
	if b != nil {
		b.close(0)
	}
}

// ApplyEdit sends workspace/applyEdit with a versioned TextDocumentEdit.
func (e *editor) ApplyEdit(ctx context.Context, de workspace.DocumentEdit) error {
	s := e.s
	s.mu.Lock()
	ok, versioned := s.caps.applyEdit, s.caps.versionedEdits
	s.mu.Unlock()
	if !ok {
		return workspace.ErrUnsupported
	}
	label := "Loom: edit " + filepath.Base(de.Path)
	params := &protocol.ApplyWorkspaceEditParams{Label: &label}
	if versioned {
		edits := make([]protocol.TextDocumentEditElement, 0, len(de.Edits))
		for _, te := range de.Edits {
			edits = append(edits, &protocol.TextEdit{Range: lspRange(te.Range), NewText: te.NewText})
		}
		version := de.Version
		params.Edit.DocumentChanges = []protocol.DocumentChange{
			&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
					TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: pathURI(de.Path)},
					Version:                &version,
				},
				Edits: edits,
			},
		}
	} else {
		// The client cannot check versions (e.g. Neovim without our plugin
		// does not declare documentChanges). The session checked that the
		// buffer still held the text the edit was computed from; sending it
		// unversioned beats writing under an open buffer.
		edits := make([]protocol.TextEdit, 0, len(de.Edits))
		for _, te := range de.Edits {
			edits = append(edits, protocol.TextEdit{Range: lspRange(te.Range), NewText: te.NewText})
		}
		params.Edit.Changes = map[uri.URI][]protocol.TextEdit{pathURI(de.Path): edits}
	}
	var res protocol.ApplyWorkspaceEditResult
	if err := s.callClient(ctx, protocol.MethodWorkspaceApplyEdit, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return workspace.ErrUnsupported
		}
		return fmt.Errorf("workspace/applyEdit %s: %w", de.Path, err)
	}
	if !res.Applied {
		reason := "no reason given"
		if res.FailureReason != nil && *res.FailureReason != "" {
			reason = *res.FailureReason
		}
		return fmt.Errorf("%w: %s (%s)", workspace.ErrEditRejected, filepath.Base(de.Path), reason)
	}
	return nil
}

// The answers of an approval request.
const (
	approveAllow = "Allow"
	approveDeny  = "Deny"
	// approveAlways is offered when the session can remember it (MCP
	// tools: this tool, for the rest of the session).
	approveAlways = "Always allow"
)

// Approve asks with window/showMessageRequest (Allow / Deny, and "Always
// allow" when the session can remember it). Dismissing
// the message denies.
func (e *editor) Approve(ctx context.Context, a workspace.Approval) (bool, error) {
	// The text and tool call before the approval go out first.
	if b := e.s.outboxFor(a.Folder); b != nil {
		b.flush(ctx)
	}
	msg := fmt.Sprintf("Loom (%s) wants to run %s:\n%s", filepath.Base(a.Folder), a.Tool, a.Detail)
	params := &protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeWarning, Message: msg,
		Actions: []protocol.MessageActionItem{{Title: approveAllow}, {Title: approveDeny}},
	}
	if a.Always != nil {
		params.Actions = append(params.Actions, protocol.MessageActionItem{Title: approveAlways})
	}
	var item *protocol.MessageActionItem
	if err := e.s.callClient(ctx, protocol.MethodWindowShowMessageRequest, params, &item); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return false, workspace.ErrUnsupported
		}
		return false, fmt.Errorf("window/showMessageRequest: %w", err)
	}
	if item != nil && item.Title == approveAlways && a.Always != nil {
		a.Always()
		return true, nil
	}
	return item != nil && item.Title == approveAllow, nil
}

// SaveDocumentsParams are loom/saveDocuments' params.
type SaveDocumentsParams struct {
	URIs []string `json:"uris"`
}

// SaveDocumentsResult is loom/saveDocuments' result: the URIs saved.
type SaveDocumentsResult struct {
	Saved []string `json:"saved"`
}

// SaveDocuments asks the client to save documents with
// loom/saveDocuments, when it declared experimental.loom.saveDocuments.
func (e *editor) SaveDocuments(ctx context.Context, paths []string) ([]string, error) {
	s := e.s
	s.mu.Lock()
	ok := s.caps.saveDocuments
	s.mu.Unlock()
	if !ok {
		return nil, workspace.ErrUnsupported
	}
	params := &SaveDocumentsParams{URIs: make([]string, 0, len(paths))}
	for _, p := range paths {
		params.URIs = append(params.URIs, string(pathURI(p)))
	}
	var res SaveDocumentsResult
	if err := s.callClient(ctx, MethodSaveDocuments, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return nil, workspace.ErrUnsupported
		}
		return nil, fmt.Errorf("%s: %w", MethodSaveDocuments, err)
	}
	saved := make([]string, 0, len(res.Saved))
	for _, u := range res.Saved {
		p, err := uriPath(uri.URI(u))
		if err != nil {
			s.log.Warn("loom/saveDocuments answered a bad uri", "uri", u, "err", err)
			continue
		}
		saved = append(saved, p)
	}
	return saved, nil
}
