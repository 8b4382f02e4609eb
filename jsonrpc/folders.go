package jsonrpc

import (
	"context"
	"errors"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// didChangeWorkspaceFolders starts and stops sessions. Removing a folder
// waits for its session to close; the session cancels its editor calls
// first, so this cannot wait on the read goroutine.
func (s *Server) didChangeWorkspaceFolders(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidChangeWorkspaceFoldersParams
	if err := decodeParams(protocol.MethodWorkspaceDidChangeWorkspaceFolders, raw, &p); err != nil {
		return err
	}
	var errs []error
	for _, f := range p.Event.Removed {
		path, err := uriPath(f.URI)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Only a folder that has a session of its own: a path inside
		// another folder must not close that folder's outbox.
		if sess, err := s.host.Conversation(path); err == nil && sameFolder(sess.Folder().Path(), path) {
			s.host.RemoveFolder(path)
			s.closeOutbox(sess.Folder().Path())
		} else {
			s.host.RemoveFolder(path)
		}
	}
	if len(p.Event.Removed) > 0 {
		s.inline.settingsChanged() // a removed folder may have been the one with completion
	}
	for _, f := range p.Event.Added {
		if err := s.addFolder(f.URI); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sameFolder reports whether path names folder (a session's folder:
// absolute, symlinks resolved).
func sameFolder(folder, path string) bool {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	return filepath.Clean(path) == folder
}
