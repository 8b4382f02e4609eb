package changes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
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
// left) and reports. A files rewind journals its fsm.Rewind with its
// restores (and, at their end, the files it left): a daemon that died
// before the rewind was stepped leaves the restores without the event,
// and the resume steps it (FinishRewind), so that the conversation and
// its commits are rewound with the files.

// restoreJournal journals one revert's restores: pass planned as
// RevertOptions.Planned, then end once the revert failed or its restores
// are written.
type restoreJournal struct {
	t         *Tree
	ctx       context.Context
	top, what string
	started   bool
	// rewind is the fsm.Rewind of a files rewind, stepped after the
	// restores: journaled with them, so that a resume steps it when the
	// daemon died before it did.
	rewind *fsm.Rewind
}

func (t *Tree) newRestoreJournal(ctx context.Context, top, what string) *restoreJournal {
	return &restoreJournal{t: t, ctx: ctx, top: top, what: what}
}

// planned journals the revert's restores before the branch moves.
func (rj *restoreJournal) planned(p gitcommit.PlannedRevert) error {
	if len(p.Restores) == 0 && rj.rewind == nil {
		return nil
	}
	rec := journal.NewRestoreRecord(rj.top, rj.what, p)
	rec.Rewind = rj.rewind
	rj.started = true
	// One write(2) before the branch moves: it survives kill -9.
	return rj.t.conv.Do(rj.ctx, func() {
		rj.t.conv.Journal(journal.Record{Type: "restore", Restore: rec})
	})
}

// end journals that the restores are over (or never happen: rv nil);
// a rewind's end names the files it left (rv's conflicts, then left).
func (rj *restoreJournal) end(rv *gitcommit.Reverted, left []gitcommit.Conflict) {
	if !rj.started {
		return
	}
	rj.started = false
	rec := journal.Record{Type: "restore-end"}
	if rj.rewind != nil && rv != nil {
		rw := *rj.rewind
		for _, c := range append(append([]gitcommit.Conflict(nil), rv.Conflicts...), left...) {
			rw.Left = append(rw.Left, c.Path)
		}
		rec.Restore = &journal.RestoreRecord{Rewind: &rw}
	}
	rj.t.conv.Do(rj.ctx, func() {
		rj.t.conv.Journal(rec)
	})
}

// applyRestores writes rv's restores through the writer and journals
// their end. It returns the files left as they are, with why.
func (t *Tree) applyRestores(rj *restoreJournal, rv *gitcommit.Reverted) (left []gitcommit.Conflict) {
	defer func() { rj.end(rv, left) }()
	if len(rv.Restores) == 0 {
		return nil
	}
	w := t.RestoreWriter(rj.top)
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
// resume) and says what it did. It returns the files it left as they
// are (a rewind's Left).
func (t *Tree) FinishRestore(rec *journal.RestoreRecord) (leftRels []string) {
	if rec == nil {
		return nil
	}
	end := journal.Record{Type: "restore-end"}
	defer func() { t.conv.Journal(end) }()
	if !t.branchMoved(rec) {
		t.conv.Tell(Note{Kind: Info, Visible: true, Text: fmt.Sprintf("the daemon stopped while %s was being made, before it changed the branch or any file: nothing was changed; run it again if you still want it", rec.What)})
		return nil
	}
	defer func() {
		if rec.Rewind != nil {
			rw := *rec.Rewind
			rw.Left = append(rw.Left, leftRels...)
			end.Restore = &journal.RestoreRecord{Rewind: &rw}
		}
	}()
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
			leftRels = append(leftRels, f.Rel)
		case cur == want:
			done = append(done, f.Rel)
		case journal.VersionSum(cur) != f.Expect:
			left = append(left, f.Rel+" (changed since)")
			leftRels = append(leftRels, f.Rel)
		default:
			if err := w.Write(worktree.Change{Rel: f.Rel, Expect: cur, New: want, Mode: fs.FileMode(f.Mode)}); err != nil {
				left = append(left, fmt.Sprintf("%s (%v)", f.Rel, err))
				leftRels = append(leftRels, f.Rel)
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
	return leftRels
}

// FinishRewind records the conversation's side of a files rewind whose
// restores the journal holds and whose fsm.Rewind it does not (the
// daemon died after the branch moved, before the rewind was stepped):
// once the branch is known to have moved, it steps the rewind (left
// adds the files FinishRestore left) and takes the rewound commits out
// of Log, as the rewind would have, and says so. On the conversation's
// goroutine, once Log holds the replayed commits.
func (t *Tree) FinishRewind(rec *journal.RestoreRecord, left []string) {
	if rec == nil || rec.Rewind == nil || !t.branchMoved(rec) {
		return
	}
	rw := *rec.Rewind
	for _, rel := range left {
		if !slices.Contains(rw.Left, rel) {
			rw.Left = append(rw.Left, rel)
		}
	}
	if _, err := t.conv.Step(rw); err != nil {
		t.conv.Tell(Note{Kind: Error, Turn: rw.Turn, Visible: true, Text: fmt.Sprintf("the daemon stopped during the rewind to turn %d, after it changed the files: the conversation could not be rewound with them (%v); rewind it again (loom.rewind) to take the conversation back", rw.Turn, err)})
		return
	}
	var taken []string
	for _, c := range t.Log.Commits {
		if t.Log.TurnOf[c.SHA] >= rw.Turn {
			taken = append(taken, c.SHA)
		}
	}
	t.Log.forget(taken)
	msg := fmt.Sprintf("the daemon stopped during the rewind to turn %d, after it changed the files and before the conversation recorded it: the rewind is recorded now", rw.Turn)
	if rw.Restore == fsm.RestoreBoth {
		msg += " (the conversation is back to before that turn's prompt too)"
	}
	t.conv.Tell(Note{Kind: Info, Turn: rw.Turn, Text: msg, Visible: true})
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
