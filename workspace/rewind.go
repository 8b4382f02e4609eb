package workspace

import (
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
type Checkpoint = changes.Checkpoint

// RewindResult is what a rewind or a redo did.
type RewindResult = changes.RewindResult
