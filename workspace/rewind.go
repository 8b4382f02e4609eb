package workspace

import (
	"context"
	"sort"
	"time"

	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// Each user turn is a checkpoint. Rewind takes the files (the agent's
// auto-commits of that turn and later, by three-way merge: the user's own
// edits stay), the conversation (cut back to before the turn's prompt,
// which is handed back for editing) or both back to it; Redo undoes the
// last rewind until the next prompt. Both are fsm events, journaled; a
// files rewind is one git commit "loom: rewind to turn N", and its redo
// another that reverts it.

// ErrRewindRefused is wrapped by Rewind's and Redo's errors when they
// refuse; the error says why. Nothing was changed then.
var ErrRewindRefused = changes.ErrRewindRefused

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
type RewindResult = changes.RewindResult

// Checkpoints lists the turns one can rewind to, oldest first.
func (s *Conversation) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	var out []Checkpoint
	err := s.call(ctx, func() {
		for _, c := range s.m.Checkpoints() {
			cp := Checkpoint{Turn: c.Turn, Prompt: s.folder.host.redactor.String(c.Prompt), Time: s.turnTimes[c.Turn], Compacted: c.Compacted, Commits: []string{}, Files: []string{}}
			seen := map[string]bool{}
			for _, commit := range s.changes.Log.Commits {
				if s.changes.Log.TurnOf[commit.SHA] != c.Turn {
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
