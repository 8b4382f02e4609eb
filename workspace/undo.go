package workspace

import (
	"context"
	"fmt"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// ErrUndoRefused is wrapped by Undo's error when a guard refuses to undo;
// the error says why.
var ErrUndoRefused = gitcommit.ErrUndoRefused

// Undo reverts the session's last auto-commit (loom.undo) and returns what
// it did: the commit leaves the branch (it must be HEAD, not pushed) and
// its files lose the agent's change and nothing else; the user's later
// edits stay (see gitcommit.Undo). It refuses, with an error wrapping
// ErrUndoRefused that says why, when the session made no commit, when a
// guard of gitcommit.Undo refuses, or when one of the commit's files is
// open in the editor with unsaved changes. Undoing again undoes the
// session's previous commit.
func (s *Session) Undo(ctx context.Context) (string, error) {
	var last *gitcommit.Result
	var scrub string
	if err := s.call(ctx, func() {
		if n := len(s.git.commits); n > 0 {
			last = s.git.commits[n-1]
		}
		scrub = s.cfg.Model.APIKeyEnv
	}); err != nil {
		return "", err
	}
	if last == nil {
		return "", fmt.Errorf("%w: this session has made no commit", ErrUndoRefused)
	}
	repo, err := gitcommit.Open(ctx, s.folder, scrub)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUndoRefused, err)
	}
	for _, rel := range last.Files {
		if abs := repo.Top + "/" + rel; s.host.overlay.Dirty(abs) {
			return "", fmt.Errorf("%w: %s has unsaved changes in the editor; save or revert them first", ErrUndoRefused, rel)
		}
	}
	msg, err := gitcommit.Undo(ctx, repo, last)
	if err != nil {
		return "", err
	}
	s.call(ctx, func() {
		if n := len(s.git.commits); n > 0 && s.git.commits[n-1].SHA == last.SHA {
			s.git.commits = s.git.commits[:n-1]
		}
		s.git.last = ""
		if n := len(s.git.commits); n > 0 {
			s.git.last = s.git.commits[n-1].SHA
		}
		s.notify(Notification{Kind: NoteInfo, Text: msg})
	})
	return msg, nil
}
