package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// ErrUndoRefused is wrapped by Undo's error when a guard refuses to undo;
// the error says why.
var ErrUndoRefused = gitcommit.ErrUndoRefused

// Undo takes back one of the session's auto-commits (loom.undo) and
// returns what it did: the one named by sha (a full or abbreviated
// name), or the newest when sha is "". Its agent hunks leave the branch
// and the worktree, and nothing else does: the user's later edits and
// later commits' changes are kept by a three-way merge (see
// gitcommit.Revert; the newest unpushed commit simply leaves the branch,
// an older or pushed one is taken back by a revert commit). It refuses,
// with an error wrapping ErrUndoRefused that says why (naming the file),
// when the session made no such commit, when Revert refuses, or when one
// of the commit's files is open in the editor with unsaved changes.
//
// Undo waits for the turn in flight to end (as a prompt would), and the
// next turn's edits wait for it: it never races the agent.
func (s *Conversation) Undo(ctx context.Context, sha string) (string, error) {
	held, err := s.waitTurnEnd(ctx)
	if err != nil {
		return "", err
	}
	if !held {
		s.git.lock.Lock()
	}
	defer s.git.lock.Unlock()
	var target *gitcommit.Result
	var scrub string
	var known []string
	if err := s.call(ctx, func() {
		scrub = s.cfg.Model.APIKeyEnv
		for i := len(s.git.commits) - 1; i >= 0; i-- {
			c := s.git.commits[i]
			known = append(known, gitcommit.Short(c.SHA))
			if target == nil && (sha == "" || (len(sha) >= 4 && strings.HasPrefix(c.SHA, strings.ToLower(sha)))) {
				target = c
			}
		}
	}); err != nil {
		return "", err
	}
	switch {
	case target == nil && len(known) == 0:
		return "", fmt.Errorf("%w: this session has made no commit", ErrUndoRefused)
	case target == nil:
		return "", fmt.Errorf("%w: %s is not an auto-commit of this session (its commits: %s)", ErrUndoRefused, sha, strings.Join(known, ", "))
	}
	repo, err := gitcommit.Open(ctx, s.folder.dir, scrub)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUndoRefused, err)
	}
	for _, rel := range target.Files {
		if abs := repo.Top + "/" + rel; s.folder.host.overlay.Dirty(abs) {
			return "", fmt.Errorf("%w: %s has unsaved changes in the editor; save or revert them first", ErrUndoRefused, rel)
		}
	}
	rj := s.newRestoreJournal(ctx, repo.Top, "the undo of "+gitcommit.Short(target.SHA))
	rv, err := gitcommit.Revert(ctx, repo, []*gitcommit.Result{target}, gitcommit.RevertOptions{Planned: rj.planned})
	if err != nil {
		rj.end()
		return "", err
	}
	left := s.applyRestores(rj, rv)
	msg := rv.Message() + leftWords(left)
	s.call(ctx, func() {
		s.git.forget(rv.Reverted)
		s.notify(Notification{Kind: NoteInfo, Text: msg, Visible: true})
	})
	return msg, nil
}

// forget drops commits taken back from the session's list.
func (g *gitState) forget(shas []string) {
	gone := map[string]bool{}
	for _, s := range shas {
		gone[s] = true
	}
	kept := g.commits[:0]
	for _, c := range g.commits {
		if !gone[c.SHA] {
			kept = append(kept, c)
		}
	}
	g.commits = kept
	g.last = ""
	if n := len(g.commits); n > 0 {
		g.last = g.commits[n-1].SHA
	}
}

// waitTurnEnd returns once the session has no turn in flight: at once
// when idle, else when the turn in flight ends. held reports that the
// worktree lock was taken for the caller at the turn's end, before a
// queued prompt's turn could take it.
func (s *Conversation) waitTurnEnd(ctx context.Context) (held bool, err error) {
	var wait chan bool
	if err := s.call(ctx, func() {
		if s.busy() {
			wait = make(chan bool, 1)
			s.git.idle = append(s.git.idle, wait)
		}
	}); err != nil {
		return false, err
	}
	if wait == nil {
		return false, nil
	}
	select {
	case held = <-wait:
		return held, nil
	case <-ctx.Done():
		// The lock may have been handed over meanwhile: give it back.
		go func() {
			select {
			case held := <-wait:
				if held {
					s.git.lock.Unlock()
				}
			case <-s.done:
			}
		}()
		return false, ctx.Err()
	case <-s.done:
		return false, ErrClosed
	}
}

// turnEnded hands the worktree lock to the first undo waiting for the
// turn to end, when it is free, and releases the others; on the owner
// goroutine, when the turn ends.
func (g *gitState) turnEnded() {
	for _, w := range g.idle {
		w <- g.lock.TryLock()
	}
	g.idle = nil
}

// absPaths joins each of rels (slash-separated, relative to top) to top.
func absPaths(top string, rels []string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(top, filepath.FromSlash(r))
	}
	return out
}

// leftWords says which restores were left, for a message; "" when none.
func leftWords(left []gitcommit.Conflict) string {
	if len(left) == 0 {
		return ""
	}
	var why []string
	for _, c := range left {
		why = append(why, c.Reason)
	}
	return "; " + strings.Join(why, "; ")
}
