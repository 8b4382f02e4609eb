package workspace

import (
	"context"
	"errors"
	"sync"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// ChangeVerbs are a conversation's change verbs (loom.undo,
// loom.undoFile, loom.rewind, loom.redo, loom.commit, loom.discard):
// each asks the conversation's changes.Tree what to do (a
// changes.Outcome) and applies it, here, in the one order the Outcome
// documents. It holds what applying needs — the folder's worktree lock
// and the conversation's goroutine, journal, machine and user as
// functions — and nothing else of the conversation.
type ChangeVerbs struct {
	tree *changes.Tree
	// lock is the folder's worktree lock; afterTurn waits for the turn
	// in flight to end and takes it (held: it was taken for the caller
	// as the turn ended).
	lock      *sync.Mutex
	afterTurn func(ctx context.Context) (held bool, err error)
	// do runs f on the conversation's goroutine and waits; post runs it
	// there without waiting.
	do   func(ctx context.Context, f func()) error
	post func(f func())
	// On the conversation's goroutine: view is the conversation as the
	// Tree reads it; journal writes a record to its journal; step steps
	// its machine (journaled, the actions performed); indexLeft keeps
	// index entries to retry at the next turn; tell tells the user.
	view      func() changes.View
	journal   func(journal.Record)
	step      func(fsm.Event) ([]fsm.Action, error)
	indexLeft func([]gitcommit.Entry)
	tell      func(changes.Note)
}

// apply performs o in the order changes.Outcome documents: its revert or
// its commit (journaled before the branch moves, written, its end
// journaled), then After's rest of the outcome; then, on the
// conversation's goroutine, its journal records, its event, Then,
// IndexLeft and its notes (here). It returns the outcome applied last
// (After's), whose Message, Rewind and Hook are the verb's answer.
func (v *ChangeVerbs) apply(ctx context.Context, o changes.Outcome) (changes.Outcome, error) {
	if o.Revert != nil || o.Commit != nil {
		var d changes.Done
		if o.Revert != nil {
			var err error
			if d, err = v.revert(ctx, o.Revert); err != nil {
				return o, o.Fail(err)
			}
		} else {
			d = v.commit(ctx, o.Commit)
		}
		next, err := o.After(d)
		if err != nil {
			return next, err
		}
		if next.Refused == nil {
			next.Refused = o.Refused
		}
		o = next
	}
	if !o.OnGoroutine() {
		return o, nil
	}
	var stepErr error
	if err := v.do(ctx, func() { stepErr = v.here(o) }); err != nil {
		return o, err
	}
	return o, o.Fail(stepErr)
}

// here performs o's parts that are the conversation's, in order: the
// journal records, the event (a refused one ends it with its error),
// Then, IndexLeft, the notes. On the conversation's goroutine.
func (v *ChangeVerbs) here(o changes.Outcome) error {
	for _, rec := range o.Journal {
		v.journal(rec)
	}
	var acts []fsm.Action
	if o.Event != nil {
		var err error
		if acts, err = v.step(o.Event); err != nil {
			return err
		}
	}
	if o.Then != nil {
		o.Then(v.view(), acts)
	}
	if len(o.IndexLeft) > 0 {
		v.indexLeft(o.IndexLeft)
	}
	for _, n := range o.Notes {
		v.tell(n)
	}
	return nil
}

// revert moves the branch for r: its restores journaled first (one
// write(2), before the branch moves: it survives kill -9), then
// gitcommit.Revert, then the restores written through the repository's
// writer, then their end journaled. A daemon that dies between the first
// record and the last leaves what the resume finishes
// (changes.Tree.FinishRestore).
func (v *ChangeVerbs) revert(ctx context.Context, r *changes.Revert) (changes.Done, error) {
	started := false
	opts := r.Options
	opts.Planned = func(p gitcommit.PlannedRevert) error {
		rec, ok := r.Planned(p)
		if !ok {
			return nil
		}
		started = true
		return v.do(ctx, func() { v.journal(rec) })
	}
	rv, err := gitcommit.Revert(ctx, r.Repo, r.Commits, opts)
	if err != nil {
		if started {
			v.do(ctx, func() { v.journal(r.End(nil, nil)) })
		}
		return changes.Done{}, err
	}
	var left []gitcommit.Conflict
	if len(rv.Restores) > 0 {
		left = changes.WriteRestores(v.tree.RestoreWriter(r.Repo.Top), rv)
	}
	if started {
		v.do(ctx, func() { v.journal(r.End(rv, left)) })
	}
	return changes.Done{Reverted: rv, Left: left}, nil
}

// commit makes p's commit: its plan journaled first (one write(2): a
// commit the daemon's death cuts short is reported on resume), then the
// commit, then its end journaled.
func (v *ChangeVerbs) commit(ctx context.Context, p *changes.CommitPlan) changes.Done {
	start := p.Start()
	if err := v.do(ctx, func() { v.journal(start) }); err != nil {
		p.Plan.Discard()
		return changes.Done{Err: err}
	}
	res, err := p.Make(ctx)
	end := p.End(res, err)
	v.post(func() { v.journal(end) })
	return changes.Done{Committed: res, Err: err}
}

// locked runs verb holding the worktree lock, once the turn in flight
// ended when wait is set, and applies what it returns.
func (v *ChangeVerbs) locked(ctx context.Context, wait bool, verb func() (changes.Outcome, error)) (changes.Outcome, error) {
	held := false
	if wait {
		var err error
		if held, err = v.afterTurn(ctx); err != nil {
			return changes.Outcome{}, err
		}
	}
	if !held {
		v.lock.Lock()
	}
	defer v.lock.Unlock()
	o, err := verb()
	if err != nil {
		return o, err
	}
	return v.apply(ctx, o)
}

// Undo takes back one of the conversation's auto-commits (loom.undo;
// changes.Tree.Undo says which and how), once the turn in flight ended,
// and returns what it did.
func (v *ChangeVerbs) Undo(ctx context.Context, sha string) (string, error) {
	o, err := v.locked(ctx, true, func() (changes.Outcome, error) { return v.tree.Undo(ctx, sha) })
	return o.Message, err
}

// UndoFile takes back the agent's changes to one file
// (changes.Tree.UndoFile), once the turn in flight ended.
func (v *ChangeVerbs) UndoFile(ctx context.Context, path string, commits []string) (string, error) {
	o, err := v.locked(ctx, true, func() (changes.Outcome, error) { return v.tree.UndoFile(ctx, path, commits) })
	return o.Message, err
}

// Rewind goes back to just before turn's prompt (changes.Tree.Rewind).
func (v *ChangeVerbs) Rewind(ctx context.Context, turn uint64, restore fsm.Restore) (changes.RewindResult, error) {
	o, err := v.locked(ctx, false, func() (changes.Outcome, error) { return v.tree.Rewind(ctx, turn, restore) })
	return rewound(o, err)
}

// Redo undoes the last rewind, until the next prompt.
func (v *ChangeVerbs) Redo(ctx context.Context) (changes.RewindResult, error) {
	o, err := v.locked(ctx, false, func() (changes.Outcome, error) { return v.tree.Redo(ctx) })
	return rewound(o, err)
}

// rewound is a rewind's or a redo's answer.
func rewound(o changes.Outcome, err error) (changes.RewindResult, error) {
	if o.Rewind == nil {
		return changes.RewindResult{}, err
	}
	return *o.Rewind, err
}

// CanRedo reports whether Redo would undo a rewind now.
func (v *ChangeVerbs) CanRedo(ctx context.Context) bool { return v.tree.CanRedo(ctx) }

// Checkpoints lists the turns one can rewind to, oldest first.
func (v *ChangeVerbs) Checkpoints(ctx context.Context) ([]changes.Checkpoint, error) {
	return v.tree.Checkpoints(ctx)
}

// CommandChanges returns the commands' changes reported and not yet kept
// or discarded, oldest first.
func (v *ChangeVerbs) CommandChanges(ctx context.Context) ([]changes.CommandChange, error) {
	return v.tree.CommandChanges(ctx)
}

// KeepCommandChanges commits the commands' changes to paths (loom.commit
// {paths}; changes.Tree.KeepCommandChanges).
func (v *ChangeVerbs) KeepCommandChanges(ctx context.Context, paths []string) (string, error) {
	o, err := v.locked(ctx, false, func() (changes.Outcome, error) { return v.tree.KeepCommandChanges(ctx, paths) })
	return o.Message, err
}

// DiscardCommandChanges takes the commands' changes to paths back
// (loom.discard; changes.Tree.DiscardCommandChanges).
func (v *ChangeVerbs) DiscardCommandChanges(ctx context.Context, paths []string) (string, error) {
	o, err := v.locked(ctx, false, func() (changes.Outcome, error) { return v.tree.DiscardCommandChanges(ctx, paths) })
	return o.Message, err
}

// CommitPending makes the commit the daemon's death interrupted
// (loom.commit), and returns what it did.
func (v *ChangeVerbs) CommitPending(ctx context.Context) (string, error) {
	o, err := v.tree.CommitPending(ctx)
	if err != nil {
		return "", err
	}
	o, err = v.apply(ctx, o)
	return o.Message, err
}

// commitBatch is the post-tool hook's commit (changes.Tree.CommitBatch),
// applied; on the hook's worker, holding the worktree lock.
func (v *ChangeVerbs) commitBatch(ctx context.Context, job changes.Job, report func(*gitcommit.Repo) ([]changes.CommandChange, []string)) changes.Result {
	o, err := v.apply(ctx, v.tree.CommitBatch(ctx, job, report))
	if o.Hook == nil {
		if err == nil {
			err = errors.New("no result")
		}
		return changes.Result{Action: "the auto-commit failed: " + err.Error(), Failed: true}
	}
	return *o.Hook
}
