// Package changes holds the change verbs of a conversation: what commits
// the agent's changes, takes them back or decides on them after the
// fact — the post-tool hook's commit and whether the user's git hooks
// run for it (hooks.go), keeping (loom.commit {paths}) or discarding
// (loom.discard) what commands changed (commandchanges.go), the
// decisions under review (review.go: an edit's accepted hunks onto the
// file as it is now, a command's changes kept or taken back), loom.undo
// (undo.go), the undo of one file (undofile.go), a rewind of the files
// and its redo (rewind.go), the completion of an auto-commit the
// daemon's death cut short (commit.go) and the restores of every revert
// (restores.go).
//
// Each verb is a method of one value, the conversation's Tree, which
// holds what they all act on: the folder's writer (package worktree: no
// verb opens a user's file itself), the repository (package gitcommit
// plans every revert; it is checked against the one the folder was
// opened or trusted with) and the folder's worktree lock, shared by the
// folder's conversations so that no verb races the agent's next edit.
// Log is the conversation's auto-commits.
//
// Review is the other value: the bookkeeping of the proposals made under
// tools.edits = "review" (proposals.go) — the proposals the machine has
// not named yet and those waiting for the user, the user's decisions
// (stepped as fsm.ChangesDecided, then applied on a worker by the Tree's
// DecideEdit or DecideCommand, and the call completed), what a turn's end
// drops — and the file that keeps what waits beside the journal for the
// next daemon (reviewfile.go). It reaches the conversation through the
// ReviewConversation interface.
//
// The verbs return what to do, they do not do it to the conversation
// (outcome.go): each returns an Outcome — the branch move or the commit
// to make, the journal records, the fsm event to step, the Tree's own
// bookkeeping after it, the notes for the user — and package workspace
// applies it in the one order Outcome documents (workspace/changeapply.go:
// a revert's restores journaled, the branch moved, the restores written,
// their end journaled; then the records, the event, the bookkeeping, the
// notes). What a verb reads of the conversation (its machine, its
// configuration, its sandbox) it reads on the conversation's goroutine
// through Conversation.Read; the editor's buffers through Editor.
// Workspace imports this package, never the other way. Anything that
// changes the conversation is an fsm event (journaled, replayed); the
// restores are journaled (package journal) before the branch moves, so
// that a resume finishes them (FinishRestore).
package changes
