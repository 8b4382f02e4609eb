package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// Outcome is what a change verb asks of its conversation. The verb
// decides: it reads the conversation (Conversation.Read), git and the
// files, and changes nothing of the conversation itself — no journal
// record, no step, no note. Package workspace applies the outcome (one
// apply, workspace/changeapply.go) in the order of its fields, as raft's
// Ready documents what must happen before what:
//
//  1. Revert, when set: its restores are journaled ("restore", one
//     write(2) that survives kill -9: Revert.Planned), the branch moves
//     (gitcommit.Revert), the restores are written through the Tree's
//     RestoreWriter (WriteRestores), and their end is journaled
//     ("restore-end": Revert.End). Commit, when set: its plan is
//     journaled ("commit"), the commit is made, its end is journaled
//     ("commit-end"). After is then given what happened (Done) and
//     returns the rest of the outcome: the fields below. An error from
//     After ends the apply with it.
//  2. Journal: the records, in order.
//  3. Event: stepped through the conversation's machine (journaled, its
//     actions performed). A refused event ends the apply with its error
//     (wrapped by Refused): Then, IndexLeft and Notes are not done.
//  4. Then: the Tree's own bookkeeping after the event (its Log, the
//     rewinds a redo can undo, the command changes), given the
//     conversation as read now and the event's actions; on the
//     conversation's goroutine.
//  5. IndexLeft: index entries another git process kept locked, for
//     the index to follow once the lock is released.
//  6. Notes: told to the user, in order.
//
// Message and Rewind are what the verb answers its caller; Hook is the
// post-tool hook's result (CommitBatch).
type Outcome struct {
	Revert *Revert
	Commit *CommitPlan
	After  func(Done) (Outcome, error)

	Journal   []journal.Record
	Event     fsm.Event
	Then      func(v View, acts []fsm.Action)
	IndexLeft []gitcommit.Entry
	Notes     []Note

	// Refused, when set, wraps the error of a failed revert and of a
	// refused event (ErrRewindRefused).
	Refused error

	Message string
	Rewind  *RewindResult
	Hook    *Result
}

// OnGoroutine reports whether o has parts the conversation's goroutine
// performs (Journal, Event, Then, IndexLeft, Notes).
func (o Outcome) OnGoroutine() bool {
	return len(o.Journal) > 0 || o.Event != nil || o.Then != nil || len(o.IndexLeft) > 0 || len(o.Notes) > 0
}

// Revert is a branch move an outcome asks for: gitcommit.Revert of
// Commits in Repo with Options (whose Planned the apply sets).
type Revert struct {
	Repo    *gitcommit.Repo
	Commits []*gitcommit.Result
	Options gitcommit.RevertOptions
	// What names the revert for the journal and for a resume's words
	// ("the undo of 1a2b3c4").
	What string
	// Rewind is the fsm.Rewind of a files rewind: journaled with the
	// restores, so that a resume steps it when the daemon died before it
	// was (FinishRewind).
	Rewind *fsm.Rewind
}

// Planned is the journal record of the restores p plans, written before
// the branch moves; ok is false when there is nothing to journal.
func (r *Revert) Planned(p gitcommit.PlannedRevert) (rec journal.Record, ok bool) {
	if len(p.Restores) == 0 && r.Rewind == nil {
		return journal.Record{}, false
	}
	rr := journal.NewRestoreRecord(r.Repo.Top, r.What, p)
	rr.Rewind = r.Rewind
	return journal.Record{Type: "restore", Restore: rr}, true
}

// End is the journal record of the restores' end (rv nil: the revert
// failed and no restore happens); a rewind's end names the files it left
// (rv's conflicts, then left).
func (r *Revert) End(rv *gitcommit.Reverted, left []gitcommit.Conflict) journal.Record {
	rec := journal.Record{Type: "restore-end"}
	if r.Rewind != nil && rv != nil {
		rw := *r.Rewind
		for _, c := range append(append([]gitcommit.Conflict(nil), rv.Conflicts...), left...) {
			rw.Left = append(rw.Left, c.Path)
		}
		rec.Restore = &journal.RestoreRecord{Rewind: &rw}
	}
	return rec
}

// Fail is the error of a failed revert or a refused event: err wrapped by
// Refused, when set.
func (o Outcome) Fail(err error) error {
	if o.Refused == nil || err == nil {
		return err
	}
	return fmt.Errorf("%w: %v", o.Refused, err)
}

// WriteRestores writes rv's restores through w, the repository's
// RestoreWriter, after the branch moved. It returns the files left as
// they are, with why (a file the user changed while the revert ran).
func WriteRestores(w *worktree.Writer, rv *gitcommit.Reverted) (left []gitcommit.Conflict) {
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

// CommitPlan is a commit an outcome asks for: Plan in Repo, the user's git
// hooks run (in Sandbox) when RunHooks.
type CommitPlan struct {
	Repo     *gitcommit.Repo
	Plan     *gitcommit.Plan
	RunHooks bool
	Sandbox  *sandbox.Sandbox
}

// Start is the journal record written before anything is written to the
// branch.
func (c *CommitPlan) Start() journal.Record {
	return journal.Record{Type: "commit", Commit: &journal.CommitRecord{Plan: c.Plan, RunHooks: c.RunHooks}}
}

// Make makes the commit (after Start is journaled).
func (c *CommitPlan) Make(ctx context.Context) (*gitcommit.Result, error) {
	opts := gitcommit.CommitOptions{RunHooks: c.RunHooks}
	if c.Sandbox != nil {
		opts.Wrap = c.Sandbox.Wrap
	}
	return c.Repo.Commit(ctx, c.Plan, opts)
}

// End is the journal record of the commit's end.
func (c *CommitPlan) End(res *gitcommit.Result, err error) journal.Record {
	end := &journal.CommitRecord{}
	if res != nil {
		end.SHA = res.SHA
	}
	if err != nil {
		end.Error = err.Error()
	}
	return journal.Record{Type: "commit-end", Commit: end}
}

// Done is what the branch move or the commit of an outcome did, for its
// After.
type Done struct {
	// Reverted is the revert made, Left the restores it left.
	Reverted *gitcommit.Reverted
	Left     []gitcommit.Conflict
	// Committed is the commit made, Err why it was not.
	Committed *gitcommit.Result
	Err       error
}

// dropLeft takes the files left as they are out of rv's restored and
// kept files, and names them among its conflicts.
func dropLeft(rv *gitcommit.Reverted, left []gitcommit.Conflict) {
	for _, c := range left {
		rv.Files = slices.DeleteFunc(rv.Files, func(f string) bool { return f == c.Path })
		rv.Kept = slices.DeleteFunc(rv.Kept, func(f string) bool { return f == c.Path })
	}
	rv.Conflicts = append(rv.Conflicts, left...)
}
