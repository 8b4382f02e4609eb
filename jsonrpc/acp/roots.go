package acp

import (
	"context"
	"errors"
	"path/filepath"
	"slices"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Additional workspace roots (additionalDirectories on session/new,
// session/load and session/resume, and in session/list; stabilized by
// ACP in June 2026 — acp-go-sdk v0.13.0 already has the fields, marked
// unstable there, so only SessionInfo's "[]" needs the wire shim
// listRoots in wire.go). loom grants
// them read-only: the read tools read them by absolute path, confined
// like the folder; nothing is written there (the RFD: a root "does not
// imply that all in-scope paths are writable"), and the sandbox's hidden
// paths stay hidden. A root that cannot be granted fails the request
// (invalid_params), never silently dropped. On load and resume the given
// list is the complete new one (omitted: none).

// setRoots grants the session's conversation the additional directories
// dirs (each absolute, non-empty), replacing its previous ones.
func (a *agent) setRoots(ctx context.Context, s *session, dirs []string) error {
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			return invalidParams("additionalDirectories: %q is not an absolute path", d)
		}
	}
	roots, err := s.ws.Controls().SetReadRoots(ctx, dirs)
	switch {
	case errors.Is(err, workspace.ErrClosed):
		return err
	case err != nil:
		return invalidParams("additionalDirectories: %v", err)
	}
	a.mu.Lock()
	s.roots = roots
	a.mu.Unlock()
	if len(roots) > 0 {
		a.log.Info("additional directories", "session", s.id, "roots", roots)
	}
	return nil
}

// rootsOf returns the additional directories of session id as granted
// ([] when none, or when the session is not open here: a load without
// them activates none).
func (a *agent) rootsOf(id acpsdk.SessionId) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil && len(s.roots) > 0 {
		return append([]string(nil), s.roots...)
	}
	return []string{}
}

// rootsMatch is session/list's additionalDirectories filter: an exact
// match of the ordered list, each filter entry with its symlinks resolved
// as the granted ones are; no filter matches all.
func rootsMatch(roots, filter []string) bool {
	if len(filter) == 0 {
		return true
	}
	want := make([]string, len(filter))
	for i, f := range filter {
		want[i] = filepath.Clean(f)
		if r, err := filepath.EvalSymlinks(want[i]); err == nil {
			want[i] = r
		}
	}
	return slices.Equal(roots, want)
}

// forget drops session id (a session/new that failed after its
// conversation was made).
func (a *agent) forget(id acpsdk.SessionId) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil && a.recent[s.folder] == s {
		delete(a.recent, s.folder)
	}
	delete(a.sessions, id)
	// What was held for it until its response is dropped: no response
	// named it.
	a.updates.dropLocked(id)
}
