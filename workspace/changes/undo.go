package changes

import (
	"context"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

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
func (t *Tree) Undo(ctx context.Context, sha string) (string, error) {
	held, err := t.conv.WaitTurnEnd(ctx)
	if err != nil {
		return "", err
	}
	if !held {
		t.lock.Lock()
	}
	defer t.lock.Unlock()
	var target *gitcommit.Result
	var scrub string
	var known []string
	if err := t.conv.Do(ctx, func() {
		scrub = t.conv.Scrub()
		for i := len(t.Log.Commits) - 1; i >= 0; i-- {
			c := t.Log.Commits[i]
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
	repo, err := gitcommit.Open(ctx, t.dir, scrub)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUndoRefused, err)
	}
	for _, rel := range target.Files {
		if abs := repo.Top + "/" + rel; t.conv.Dirty(abs) {
			return "", fmt.Errorf("%w: %s has unsaved changes in the editor; save or revert them first", ErrUndoRefused, rel)
		}
	}
	rj := t.newRestoreJournal(ctx, repo.Top, "the undo of "+gitcommit.Short(target.SHA))
	rv, err := gitcommit.Revert(ctx, repo, []*gitcommit.Result{target}, gitcommit.RevertOptions{Planned: rj.planned})
	if err != nil {
		rj.end(nil, nil)
		return "", err
	}
	left := t.applyRestores(rj, rv)
	msg := rv.Message() + leftWords(left)
	t.conv.Do(ctx, func() {
		t.Log.forget(rv.Reverted)
		t.conv.Tell(Note{Kind: Info, Text: msg, Visible: true})
	})
	return msg, nil
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
