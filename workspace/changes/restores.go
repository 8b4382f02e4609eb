package changes

import (
	"context"
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

// FinishRestore completes restores a daemon's death cut short (found on
// resume, on the conversation's goroutine; scrub as View.Scrub) and
// returns what to do (the restores' end journaled, the user told). It
// returns the files it left as they are (a rewind's Left).
func (t *Tree) FinishRestore(rec *journal.RestoreRecord, scrub string) (leftRels []string, o Outcome) {
	if rec == nil {
		return nil, Outcome{}
	}
	end := journal.Record{Type: "restore-end"}
	if !t.branchMoved(rec, scrub) {
		return nil, Outcome{Journal: []journal.Record{end}, Notes: []Note{{Kind: Info, Visible: true, Text: fmt.Sprintf("the daemon stopped while %s was being made, before it changed the branch or any file: nothing was changed; run it again if you still want it", rec.What)}}}
	}
	defer func() {
		if rec.Rewind != nil {
			rw := *rec.Rewind
			rw.Left = append(rw.Left, leftRels...)
			end.Restore = &journal.RestoreRecord{Rewind: &rw}
		}
		o.Journal = []journal.Record{end}
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
	return leftRels, Outcome{Notes: []Note{{Kind: Info, Text: msg, Visible: true}}}
}

// FinishRewind records the conversation's side of a files rewind whose
// restores the journal holds and whose fsm.Rewind it does not (the
// daemon died after the branch moved, before the rewind was stepped):
// once the branch is known to have moved, it steps the rewind (left
// adds the files FinishRestore left) and takes the rewound commits out
// of Log, as the rewind would have, and says so: it returns that to do.
// On the conversation's goroutine, once Log holds the replayed commits;
// when the step is refused, the user is told RewindLost.
func (t *Tree) FinishRewind(rec *journal.RestoreRecord, left []string, scrub string) (Outcome, bool) {
	if rec == nil || rec.Rewind == nil || !t.branchMoved(rec, scrub) {
		return Outcome{}, false
	}
	rw := *rec.Rewind
	for _, rel := range left {
		if !slices.Contains(rw.Left, rel) {
			rw.Left = append(rw.Left, rel)
		}
	}
	then := func(View, []fsm.Action) {
		var taken []string
		for _, c := range t.Log.Commits {
			if t.Log.TurnOf[c.SHA] >= rw.Turn {
				taken = append(taken, c.SHA)
			}
		}
		t.Log.forget(taken)
	}
	msg := fmt.Sprintf("the daemon stopped during the rewind to turn %d, after it changed the files and before the conversation recorded it: the rewind is recorded now", rw.Turn)
	if rw.Restore == fsm.RestoreBoth {
		msg += " (the conversation is back to before that turn's prompt too)"
	}
	return Outcome{Event: rw, Then: then, Notes: []Note{{Kind: Info, Turn: rw.Turn, Text: msg, Visible: true}}}, true
}

// RewindLost is what the user is told when the rewind FinishRewind
// steps is refused (err).
func RewindLost(turn uint64, err error) Note {
	return Note{Kind: Error, Turn: turn, Visible: true, Text: fmt.Sprintf("the daemon stopped during the rewind to turn %d, after it changed the files: the conversation could not be rewound with them (%v); rewind it again (loom.rewind) to take the conversation back", turn, err)}
}

// branchMoved reports whether the revert of rec moved the branch: HEAD
// is its Head or descends from it, without the commits it dropped.
func (t *Tree) branchMoved(rec *journal.RestoreRecord, scrub string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	repo, err := gitcommit.Open(ctx, rec.Top, scrub)
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
