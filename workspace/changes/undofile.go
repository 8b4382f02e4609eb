package changes

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// UndoFile takes back the agent's changes to one file (loom.undoFile, the
// panel's per-file Undo): the hunks the session's auto-commits wrote into
// path, and nothing else — the same commits' other files stay, and the
// user's own edits to path are kept by a three-way merge. commits names
// the auto-commits (full or abbreviated shas) to take back from; empty
// means the commits of the latest turn that changed path. It is one
// revert commit "loom: undo <file>", recorded as an auto-commit of the
// current turn, so that loom.undo or a rewind can take it back in turn.
//
// path is absolute, or relative to the folder (or to the repository's
// top, as loom/commit names files). It refuses, with an error
// wrapping ErrUndoRefused that says why, when no such commit changed
// path, when the file has unsaved changes in the editor, or when the
// user's edits to it overlap the agent's. Like Undo, it returns what to
// do, and its caller waits for the turn in flight to end.
func (t *Tree) UndoFile(ctx context.Context, path string, commits []string) (Outcome, error) {
	if strings.TrimSpace(path) == "" {
		return Outcome{}, fmt.Errorf("%w: no file named", ErrUndoRefused)
	}
	var (
		mine  []*gitcommit.Result
		scrub string
		turn  uint64
		turns map[string]uint64
	)
	if err := t.conv.Read(ctx, func(v View) {
		scrub = v.Scrub
		mine = slices.Clone(t.Log.Commits)
		turn = v.Machine.State().Turn
		turns = make(map[string]uint64, len(mine))
		for _, c := range mine {
			turns[c.SHA] = t.Log.TurnOf[c.SHA]
		}
	}); err != nil {
		return Outcome{}, err
	}
	repo, err := gitcommit.Open(ctx, t.dir, scrub)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %v", ErrUndoRefused, err)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(t.dir, filepath.FromSlash(path))
	}
	rel, err := filepath.Rel(repo.Top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return Outcome{}, fmt.Errorf("%w: %s is outside the repository %s", ErrUndoRefused, path, repo.Top)
	}
	rel = filepath.ToSlash(rel)
	targets, err := undoFileCommits(mine, turns, rel, commits)
	if err != nil && !filepath.IsAbs(path) && filepath.ToSlash(filepath.Clean(path)) != rel {
		// A relative path may also be the repository's (as loom/commit
		// names the files), when the folder is below the repository's top.
		if t, err2 := undoFileCommits(mine, turns, filepath.ToSlash(filepath.Clean(path)), commits); err2 == nil {
			targets, err, rel = t, nil, filepath.ToSlash(filepath.Clean(path))
		}
	}
	if err != nil {
		return Outcome{}, err
	}
	if t.ed.Dirty(filepath.Join(repo.Top, filepath.FromSlash(rel))) {
		return Outcome{}, fmt.Errorf("%w: %s has unsaved changes in the editor; save or revert them first", ErrUndoRefused, rel)
	}
	message := "loom: undo the agent's changes to " + rel + "\n\nTakes back what "
	for i, c := range targets {
		if i > 0 {
			message += ", "
		}
		message += gitcommit.Short(c.SHA)
	}
	message += " changed in " + rel + ", keeping the other files and the later edits.\n"
	what := "the undo of the agent's changes to " + rel
	return Outcome{
		Revert: &Revert{Repo: repo, Commits: targets, Options: gitcommit.RevertOptions{Message: message, Paths: []string{rel}}, What: what},
		After: func(d Done) (Outcome, error) {
			rv := d.Reverted
			msg := "undid the agent's changes to " + rel
			if rv.Commit != nil {
				msg += " with commit " + gitcommit.Short(rv.Commit.SHA)
			}
			if len(rv.Kept) > 0 {
				msg += "; your own edits to it are kept"
			}
			if rv.Commit != nil {
				msg += "; to get them back: git revert " + gitcommit.Short(rv.Commit.SHA)
			}
			msg += leftWords(d.Left)
			return Outcome{
				Then: func(View, []fsm.Action) {
					if c := rv.Commit; c != nil {
						t.Log.Commits = append(t.Log.Commits, c)
						t.Log.Last = c.SHA
						if t.Log.TurnOf == nil {
							t.Log.TurnOf = map[string]uint64{}
						}
						t.Log.TurnOf[c.SHA] = turn
					}
				},
				Notes:   []Note{{Kind: Info, Text: msg, Visible: true}},
				Message: msg,
			}, nil
		},
	}, nil
}

// undoFileCommits picks, among the session's commits (oldest first, with
// their turns), those UndoFile takes rel back from: the ones named by
// shas that changed rel, or, with no shas, those of the latest turn that
// changed rel.
func undoFileCommits(mine []*gitcommit.Result, turns map[string]uint64, rel string, shas []string) ([]*gitcommit.Result, error) {
	touches := func(c *gitcommit.Result) bool { return slices.Contains(c.Files, rel) }
	var out []*gitcommit.Result
	if len(shas) > 0 {
		for _, sha := range shas {
			sha = strings.ToLower(strings.TrimSpace(sha))
			var found *gitcommit.Result
			for _, c := range mine {
				if len(sha) >= 4 && strings.HasPrefix(c.SHA, sha) {
					found = c
				}
			}
			switch {
			case found == nil:
				return nil, fmt.Errorf("%w: %s is not an auto-commit of this session", ErrUndoRefused, sha)
			case touches(found) && !slices.Contains(out, found):
				out = append(out, found)
			}
		}
	} else {
		var latest uint64
		for _, c := range mine {
			if touches(c) && turns[c.SHA] >= latest {
				latest = turns[c.SHA]
			}
		}
		for _, c := range mine {
			if touches(c) && turns[c.SHA] == latest {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the agent's commits of this session did not change %s (already undone or rewound?)", ErrUndoRefused, rel)
	}
	return out, nil
}
