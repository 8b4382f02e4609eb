package changes

import (
	"context"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
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
// It returns what to do (Outcome): the revert, then the commit
// forgotten and the user told. The caller waits for the turn in flight
// to end (as a prompt would) and holds the worktree lock while it
// applies the outcome: the next turn's edits wait for it.
func (t *Tree) Undo(ctx context.Context, sha string) (Outcome, error) {
	var target *gitcommit.Result
	var scrub string
	var known []string
	if err := t.conv.Read(ctx, func(v View) {
		scrub = v.Scrub
		for i := len(t.Log.Commits) - 1; i >= 0; i-- {
			c := t.Log.Commits[i]
			known = append(known, gitcommit.Short(c.SHA))
			if target == nil && (sha == "" || (len(sha) >= 4 && strings.HasPrefix(c.SHA, strings.ToLower(sha)))) {
				target = c
			}
		}
	}); err != nil {
		return Outcome{}, err
	}
	switch {
	case target == nil && len(known) == 0:
		return Outcome{}, fmt.Errorf("%w: this session has made no commit", ErrUndoRefused)
	case target == nil:
		return Outcome{}, fmt.Errorf("%w: %s is not an auto-commit of this session (its commits: %s)", ErrUndoRefused, sha, strings.Join(known, ", "))
	}
	repo, err := gitcommit.Open(ctx, t.dir, scrub)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %v", ErrUndoRefused, err)
	}
	for _, rel := range target.Files {
		if abs := repo.Top + "/" + rel; t.ed.Dirty(abs) {
			return Outcome{}, fmt.Errorf("%w: %s has unsaved changes in the editor; save or revert them first", ErrUndoRefused, rel)
		}
	}
	return Outcome{
		Revert: &Revert{Repo: repo, Commits: []*gitcommit.Result{target}, What: "the undo of " + gitcommit.Short(target.SHA)},
		After: func(d Done) (Outcome, error) {
			msg := d.Reverted.Message() + leftWords(d.Left)
			return Outcome{
				Then:    func(View, []fsm.Action) { t.Log.forget(d.Reverted.Reverted) },
				Notes:   []Note{{Kind: Info, Text: msg, Visible: true}},
				Message: msg,
			}, nil
		},
	}, nil
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
