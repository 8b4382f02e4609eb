package changes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// A revert (an undo, an undo of one file, a rewind and its redo) is
// planned by gitcommit.Revert, which moves the branch and returns the
// files to restore on disk; they are written here, through the folder's
// one writer, after the branch moved. A file the user changed while the
// revert ran (a save during the dozen git processes) is left as it is
// and named: their version stays on disk, the restored one is in git.
//
// The restores are journaled just before the branch moves ("restore",
// with the HEAD the move gives) and when they are written
// ("restore-end"): a daemon that dies in between leaves a "restore" with
// no end, which the resumed conversation finishes when the branch did
// move (a file still as planned from is restored, one changed since is
// left) and reports.

// restoreJournal journals one revert's restores: pass planned as
// RevertOptions.Planned, then end once the revert failed or its restores
// are written.
type restoreJournal struct {
	t         *Tree
	ctx       context.Context
	top, what string
	started   bool
}

func (t *Tree) newRestoreJournal(ctx context.Context, top, what string) *restoreJournal {
	return &restoreJournal{t: t, ctx: ctx, top: top, what: what}
}

// planned journals the revert's restores before the branch moves.
func (rj *restoreJournal) planned(p gitcommit.PlannedRevert) error {
	if len(p.Restores) == 0 {
		return nil
	}
	rec := journal.NewRestoreRecord(rj.top, rj.what, p)
	rj.started = true
	// One write(2) before the branch moves: it survives kill -9.
	return rj.t.conv.Do(rj.ctx, func() {
		rj.t.conv.Journal(journal.Record{Type: "restore", Restore: rec})
	})
}

// end journals that the restores are over (or never happen).
func (rj *restoreJournal) end() {
	if !rj.started {
		return
	}
	rj.started = false
	rj.t.conv.Do(rj.ctx, func() {
		rj.t.conv.Journal(journal.Record{Type: "restore-end"})
	})
}

// applyRestores writes rv's restores through the writer and journals
// their end. It returns the files left as they are, with why.
func (t *Tree) applyRestores(rj *restoreJournal, rv *gitcommit.Reverted) []gitcommit.Conflict {
	defer rj.end()
	if len(rv.Restores) == 0 {
		return nil
	}
	w := t.RestoreWriter(rj.top)
	var left []gitcommit.Conflict
	for i, err := range w.WriteAll(rv.Restores) {
		if err != nil {
			rel := rv.Restores[i].Rel
			left = append(left, gitcommit.Conflict{Path: rel, Reason: restoreLeft(rel, err, rv)})
		}
	}
	return left
}

// restoreLeft says why rel was not restored, and where each version is.
func restoreLeft(rel string, err error, rv *gitcommit.Reverted) string {
	where := "git show " + gitcommit.Short(rv.Head) + ":" + rel
	if errors.Is(err, worktree.ErrChanged) {
		return fmt.Sprintf("%s changed on disk while it was being restored, so it is left as you saved it; the restored version: %s", rel, where)
	}
	return fmt.Sprintf("%s was not restored (%v); the restored version: %s", rel, err, where)
}

// FinishRestore completes restores a daemon's death cut short (found on
// resume) and says what it did.
func (t *Tree) FinishRestore(rec *journal.RestoreRecord) {
	if rec == nil {
		return
	}
	defer t.conv.Journal(journal.Record{Type: "restore-end"})
	if !t.branchMoved(rec) {
		t.conv.Tell(Note{Kind: Info, Visible: true, Text: fmt.Sprintf("the daemon stopped while %s was being made, before it changed the branch or any file: nothing was changed; run it again if you still want it", rec.What)})
		return
	}
	w := t.RestoreWriter(rec.Top)
	var done, left []string
	for _, f := range rec.Files {
		want := worktree.Absent
		if f.New != nil {
			want = worktree.Text(*f.New)
		}
		cur, _, err := w.Read(f.Rel)
		switch {
		case err != nil:
			left = append(left, fmt.Sprintf("%s (%v)", f.Rel, err))
		case cur == want:
			done = append(done, f.Rel)
		case journal.VersionSum(cur) != f.Expect:
			left = append(left, f.Rel+" (changed since)")
		default:
			if err := w.Write(worktree.Change{Rel: f.Rel, Expect: cur, New: want, Mode: fs.FileMode(f.Mode)}); err != nil {
				left = append(left, fmt.Sprintf("%s (%v)", f.Rel, err))
				continue
			}
			done = append(done, f.Rel)
		}
	}
	msg := fmt.Sprintf("the daemon stopped while %s was restoring files (HEAD %s); finished now", rec.What, gitcommit.Short(rec.Head))
	if len(done) > 0 {
		msg += ": restored " + strings.Join(done, ", ")
	}
	if len(left) > 0 {
		msg += "; left as they are: " + strings.Join(left, ", ") + "; their restored versions: git show " + gitcommit.Short(rec.Head) + ":<file>"
	}
	t.conv.Tell(Note{Kind: Info, Text: msg, Visible: true})
}

// branchMoved reports whether the revert of rec moved the branch: HEAD
// is its Head or descends from it, without the commits it dropped.
func (t *Tree) branchMoved(rec *journal.RestoreRecord) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	repo, err := gitcommit.Open(ctx, rec.Top, t.conv.Scrub())
	if err != nil || !repo.IsAncestor(ctx, rec.Head, repo.Head) {
		return false
	}
	for _, d := range rec.Dropped {
		if repo.IsAncestor(ctx, d, repo.Head) {
			return false
		}
	}
	return true
}
