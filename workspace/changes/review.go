package changes

import (
	"context"
	"io/fs"
	"slices"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/review"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// CommandFile is one file of a command's changes under review (tools.edits
// = "review"): the file just before the command and as it left it, and
// its hunks.
type CommandFile struct {
	Abs, Rel      string
	Before, After worktree.Version
	Change        *review.Change
	Mode          fs.FileMode
}

// ReviewResult is what a review decision did.
type ReviewResult struct {
	// Applied are the hunks now in the file; Rejected those the user
	// rejected; Conflicts accepted hunks left out because the user
	// changed the same lines meanwhile.
	Applied   []string `json:"applied"`
	Rejected  []string `json:"rejected"`
	Conflicts []string `json:"conflicts,omitempty"`
}

// DecideCommand keeps the accepted hunks of a command's changes
// and takes the others back (on a worker); it returns what it did and
// the edits to record for the hook (the kept bytes).
func (t *Tree) DecideCommand(ctx context.Context, files []*CommandFile, accepted []string, reads *tools.ReadTracker) (ReviewResult, []Keep, error) {
	repo, err := gitcommit.Open(ctx, t.dir, t.Config(ctx).Model.APIKeyEnv)
	if err != nil {
		return ReviewResult{}, nil, err
	}
	var res ReviewResult
	var keep []Keep
	w := t.FolderWriter()
	for _, f := range files {
		target, err := f.Change.Apply(f.Before.Text, accepted)
		if err != nil {
			return res, keep, err
		}
		want := worktree.Version{Text: target.Text, Present: true}
		if !f.Before.Present && len(target.Applied) == 0 {
			want = worktree.Version{} // a file the command made, discarded whole
		}
		rel, err := w.Rel(f.Abs)
		if err != nil {
			return res, keep, err
		}
		// Read without following links: what the decision is written over.
		disk, _, err := w.Read(rel)
		cur := []byte(disk.Text)
		untouched := false
		switch {
		case err == nil && disk == f.After:
			// As the command left it.
			untouched = true
		case err == nil && disk.Present && want.Present:
			merged, clean, merr := repo.Merge3(ctx, string(cur), f.After.Text, want.Text)
			if merr != nil {
				return res, keep, merr
			}
			if !clean {
				// The user changed the same lines since: left as it is.
				for _, h := range f.Change.File.Hunks {
					if !slices.Contains(accepted, h.ID) {
						res.Conflicts = append(res.Conflicts, h.ID)
					}
				}
				want = worktree.Version{Text: string(cur), Present: true}
				break
			}
			want.Text = merged
		default:
			for _, h := range f.Change.File.Hunks {
				if !slices.Contains(accepted, h.ID) {
					res.Conflicts = append(res.Conflicts, h.ID)
				}
			}
			continue
		}
		// The writer records its write: the watcher's echo of it is no
		// news; the user's change after it is (and leaves the file alone).
		if err := w.Write(worktree.Change{Rel: rel, Expect: disk, New: want, Mode: f.Mode}); err != nil {
			return res, keep, err
		}
		if untouched && want.Present && reads.Holds(f.Abs, []byte(f.Before.Text)) {
			// The model knew the file as it was before its command; with
			// the command and the decision it knows it now: what loom
			// wrote is what it read. (The user's typing since, merged
			// in otherwise, is news for it.)
			reads.Record(f.Abs, []byte(want.Text))
		}
		res.Applied = append(res.Applied, target.Applied...)
		if target.Text != f.Before.Text && len(target.Applied) > 0 {
			keep = append(keep, Keep{Path: f.Abs, Before: f.Before.Text, After: target.Text, Created: !f.Before.Present, Mode: f.Mode})
		}
	}
	return res, keep, nil
}

// Keep is the kept part of a command's change to one file, which
// the hook commits like an edit.
type Keep struct {
	Path, Before, After string
	Created             bool
	Mode                fs.FileMode
}

// DecideEdit applies the accepted hunks of change (an edit of path,
// proposed by call callID, rooted at root) onto the file as it is now,
// retrying when the user types between the read and the write. It returns
// the edit that landed (nil when nothing changed).
func (t *Tree) DecideEdit(ctx context.Context, root, callID, path string, mode fs.FileMode, change *review.Change, accepted []string) (ReviewResult, *tools.Edit, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		current, exists, err := t.conv.CurrentText(ctx, callID, path)
		if err != nil {
			return ReviewResult{}, nil, err
		}
		res, err := change.Apply(current, accepted)
		if err != nil {
			return ReviewResult{}, nil, err
		}
		out := ReviewResult{Applied: res.Applied, Conflicts: res.Conflicts}
		if res.Text == current {
			return out, nil, nil
		}
		e := tools.NewEdit(root, path, !exists, current, res.Text, mode)
		if lastErr = t.conv.ApplyEdit(ctx, callID, e); lastErr == nil {
			return out, e, nil
		}
		if ctx.Err() != nil {
			return ReviewResult{}, nil, ctx.Err()
		}
	}
	return ReviewResult{}, nil, lastErr
}
