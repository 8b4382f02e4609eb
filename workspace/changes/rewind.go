package changes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// Each user turn is a checkpoint. Rewind takes the files (the agent's
// auto-commits of that turn and later, by three-way merge: the user's own
// edits stay), the conversation (cut back to before the turn's prompt,
// which is handed back for editing) or both back to it; Redo undoes the
// last rewind until the next prompt. Both are fsm events, journaled; a
// files rewind is one git commit "loom: rewind to turn N", and its redo
// another that reverts it.

// Checkpoint is a turn one can rewind to.
type Checkpoint struct {
	Turn   uint64 `json:"turn"`
	Prompt string `json:"prompt"`
	// Time is when the turn started, zero when not known (a turn of a
	// resumed conversation).
	Time time.Time `json:"time,omitzero"`
	// Commits are the auto-commits of this turn; Files the files they
	// changed.
	Commits []string `json:"commits"`
	Files   []string `json:"files"`
	// Compacted marks a turn folded into a compaction summary: only its
	// files can be restored.
	Compacted bool `json:"compacted,omitempty"`
}

// RewindResult is what a rewind or a redo did.
type RewindResult struct {
	// Restored are the files changed back; Kept those where the user's
	// later edits were kept.
	Restored []string `json:"restored"`
	Kept     []string `json:"kept"`
	// Conflicts are files left exactly as they were, because the user's
	// later edits there could not be kept apart from the agent's (or the
	// file is unsaved in the editor, staged, a link); the other files
	// were rewound. Notes say why, one per conflict.
	Conflicts []string `json:"conflicts"`
	Notes     []string `json:"notes"`
	// Commit is the commit that recorded the files' rewind (or redo).
	Commit string `json:"commit,omitempty"`
	// Prompt is the rewound turn's prompt, back for editing, when the
	// conversation was rewound.
	Prompt string `json:"prompt,omitempty"`
}

// rewindRecord is a files rewind a redo can undo.
type rewindRecord struct {
	// commit is the rewind's revert commit, nil when no file changed.
	commit *gitcommit.Result
	// taken are the auto-commits it took back, restored by a redo.
	taken []*gitcommit.Result
}

// CanRedo reports whether Redo would undo a rewind now.
func (t *Tree) CanRedo(ctx context.Context) bool {
	var ok bool
	t.conv.Read(ctx, func(v View) { ok = v.Machine.CanRedo() && len(t.rewinds) > 0 })
	return ok
}

// Rewind goes back to just before turn's prompt: restore says whether the
// files, the conversation or both. The files are done first, file by
// file: a file whose later edits overlap the agent's is left as it is and
// named in the result's Conflicts, the others are rewound in one commit.
// A refused rewind (a turn in flight, a git operation in progress)
// changes nothing at all. It returns what to do (the revert, the
// fsm.Rewind, the rewinds a redo can undo); its caller holds the
// worktree lock while it applies it.
func (t *Tree) Rewind(ctx context.Context, turn uint64, restore fsm.Restore) (Outcome, error) {
	var (
		commits []*gitcommit.Result
		scrub   string
		checkEr error
	)
	if err := t.conv.Read(ctx, func(v View) {
		if v.Busy {
			checkEr = fmt.Errorf("%w: a turn is in flight; cancel it first", ErrRewindRefused)
			return
		}
		found := false
		for _, c := range v.Machine.Checkpoints() {
			if c.Turn == turn {
				found = true
				if c.Compacted && restore != fsm.RestoreFiles {
					checkEr = fmt.Errorf("%w: turn %d was compacted into a summary: only its files can be restored", ErrRewindRefused, turn)
				}
			}
		}
		if !found {
			checkEr = fmt.Errorf("%w: no checkpoint for turn %d", ErrRewindRefused, turn)
		}
		for _, c := range t.Log.Commits {
			if t.Log.TurnOf[c.SHA] >= turn {
				commits = append(commits, c)
			}
		}
		scrub = v.Scrub
	}); err != nil {
		return Outcome{}, err
	}
	if checkEr != nil {
		return Outcome{}, checkEr
	}
	// rewound is the rest of the outcome, once the files are done (rv nil:
	// no file to rewind).
	rewound := func(rv *gitcommit.Reverted) (Outcome, error) {
		res := &RewindResult{}
		rec := &rewindRecord{}
		if rv != nil {
			res.Restored, res.Kept = rv.Files, rv.Kept
			for _, c := range rv.Conflicts {
				res.Conflicts = append(res.Conflicts, c.Path)
				res.Notes = append(res.Notes, c.Reason)
			}
			rec.commit, rec.taken = rv.Commit, commits
			if rv.Commit != nil {
				res.Commit = rv.Commit.SHA
			}
		}
		res.normalize()
		return Outcome{
			Event: fsm.Rewind{Turn: turn, Restore: restore, Left: res.Conflicts},
			Then: func(_ View, acts []fsm.Action) {
				t.rewinds = append(t.rewinds, rec)
				var taken []string
				for _, c := range rec.taken {
					taken = append(taken, c.SHA)
				}
				t.Log.forget(taken)
				for _, a := range acts {
					if a, ok := a.(fsm.ConversationRewound); ok {
						res.Prompt = a.Prompt
					}
				}
			},
			Notes:   []Note{{Kind: Info, Turn: turn, Text: rewindWords(turn, restore, *res), Visible: true}},
			Refused: ErrRewindRefused,
			Rewind:  res,
		}, nil
	}
	if (restore != fsm.RestoreFiles && restore != fsm.RestoreBoth) || len(commits) == 0 {
		return rewound(nil)
	}
	rev, err := t.revertForRewind(ctx, scrub, commits, fmt.Sprintf("loom: rewind to turn %d", turn), &fsm.Rewind{Turn: turn, Restore: restore})
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Revert: rev, Refused: ErrRewindRefused, After: func(d Done) (Outcome, error) {
		dropLeft(d.Reverted, d.Left)
		return rewound(d.Reverted)
	}}, nil
}

// Redo undoes the last rewind, until the next prompt: the conversation
// comes back whole, and a files rewind's commit is reverted in turn. Like
// Rewind, it returns what to do.
func (t *Tree) Redo(ctx context.Context) (Outcome, error) {
	var rec *rewindRecord
	var scrub string
	var checkEr error
	if err := t.conv.Read(ctx, func(v View) {
		if !v.Machine.CanRedo() || len(t.rewinds) == 0 {
			checkEr = fmt.Errorf("%w: nothing to redo: no rewind since the last prompt", ErrRewindRefused)
			return
		}
		rec = t.rewinds[len(t.rewinds)-1]
		scrub = v.Scrub
	}); err != nil {
		return Outcome{}, err
	}
	if checkEr != nil {
		return Outcome{}, checkEr
	}
	redone := func(rv *gitcommit.Reverted) (Outcome, error) {
		res := &RewindResult{}
		if rv != nil {
			res.Restored, res.Kept = rv.Files, rv.Kept
			if rv.Commit != nil {
				res.Commit = rv.Commit.SHA
			}
		}
		res.normalize()
		return Outcome{
			Event: fsm.Redo{},
			Then: func(View, []fsm.Action) {
				t.rewinds = t.rewinds[:len(t.rewinds)-1]
				t.Log.Commits = append(t.Log.Commits, rec.taken...)
				sort.SliceStable(t.Log.Commits, func(i, j int) bool { return t.Log.TurnOf[t.Log.Commits[i].SHA] < t.Log.TurnOf[t.Log.Commits[j].SHA] })
				if n := len(t.Log.Commits); n > 0 {
					t.Log.Last = t.Log.Commits[n-1].SHA
				}
			},
			Notes:   []Note{{Kind: Info, Text: "redid: the last rewind is undone", Visible: true}},
			Refused: ErrRewindRefused,
			Rewind:  res,
		}, nil
	}
	if rec.commit == nil {
		return redone(nil)
	}
	rev, err := t.revertForRewind(ctx, scrub, []*gitcommit.Result{rec.commit}, "loom: redo (undo the rewind "+gitcommit.Short(rec.commit.SHA)+")", nil)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Revert: rev, Refused: ErrRewindRefused, After: func(d Done) (Outcome, error) {
		dropLeft(d.Reverted, d.Left)
		return redone(d.Reverted)
	}}, nil
}

// revertForRewind is the revert that takes commits back with one revert
// commit of message; rewind, for a rewind (nil for a redo), is journaled
// with its restores. A file unsaved in the editor is left as it is.
func (t *Tree) revertForRewind(ctx context.Context, scrub string, commits []*gitcommit.Result, message string, rewind *fsm.Rewind) (*Revert, error) {
	repo, err := gitcommit.Open(ctx, t.dir, scrub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRewindRefused, err)
	}
	leave := map[string]string{}
	for _, c := range commits {
		for _, rel := range c.Files {
			if abs := repo.Top + "/" + rel; t.ed.Dirty(abs) {
				leave[rel] = rel + " has unsaved changes in the editor; save or revert them, then rewind again"
			}
		}
	}
	return &Revert{
		Repo: repo, Commits: commits, What: "the " + strings.TrimPrefix(message, "loom: "), Rewind: rewind,
		Options: gitcommit.RevertOptions{Message: message + "\n", KeepHistory: true, LeaveConflicts: true, Leave: leave},
	}, nil
}

func (r *RewindResult) normalize() {
	if r.Restored == nil {
		r.Restored = []string{}
	}
	if r.Kept == nil {
		r.Kept = []string{}
	}
	if r.Conflicts == nil {
		r.Conflicts = []string{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
}

// rewindWords says what a rewind did, for people.
func rewindWords(turn uint64, restore fsm.Restore, r RewindResult) string {
	msg := fmt.Sprintf("rewound the %s to before turn %d", map[fsm.Restore]string{
		fsm.RestoreFiles: "files", fsm.RestoreConversation: "conversation", fsm.RestoreBoth: "files and the conversation",
	}[restore], turn)
	if len(r.Restored) > 0 {
		msg += fmt.Sprintf(" (%d file(s) restored in commit %s", len(r.Restored), gitcommit.Short(r.Commit))
		if len(r.Kept) > 0 {
			msg += fmt.Sprintf("; your later edits kept in %v", r.Kept)
		}
		msg += ")"
	}
	if left := r.LeftWords(); left != "" {
		msg += "; " + left
	}
	return msg + "; loom.redo undoes it until your next prompt"
}

// LeftWords says which files the rewind left as they were, and why; ""
// when none.
func (r RewindResult) LeftWords() string {
	if len(r.Conflicts) == 0 {
		return ""
	}
	return fmt.Sprintf("left as they are: %s (%s)", strings.Join(r.Conflicts, ", "), strings.Join(r.Notes, "; "))
}

// Checkpoints lists the turns one can rewind to, oldest first.
func (t *Tree) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	var out []Checkpoint
	err := t.conv.Read(ctx, func(v View) {
		for _, c := range v.Machine.Checkpoints() {
			cp := Checkpoint{Turn: c.Turn, Prompt: t.redact(c.Prompt), Time: v.TurnTime(c.Turn), Compacted: c.Compacted, Commits: []string{}, Files: []string{}}
			seen := map[string]bool{}
			for _, commit := range t.Log.Commits {
				if t.Log.TurnOf[commit.SHA] != c.Turn {
					continue
				}
				cp.Commits = append(cp.Commits, commit.SHA)
				for _, f := range commit.Files {
					if !seen[f] {
						seen[f] = true
						cp.Files = append(cp.Files, f)
					}
				}
			}
			sort.Strings(cp.Files)
			out = append(out, cp)
		}
	})
	return out, err
}
