// Package gitcommit is how loom commits: it turns the texts an agent's
// tools wrote into a commit of their own, and takes such a commit back.
// It knows git and nothing of sessions or editors.
//
// The rule it keeps: an agent commit holds exactly the bytes the agent's
// tools wrote, on top of what the commit's parent holds. Nothing the user
// typed, saved or staged goes into it.
//
//   - [Repo.Prepare] builds the commit's content from the agent's own
//     texts (each edit's old and new text, never what the disk or a buffer
//     holds later). When the user had uncommitted changes of their own in
//     a file, the agent's hunks are applied to the parent's version with
//     `git merge-file`; when they overlap the user's, the file is left out
//     and the reason said. Submodule files, git-ignored files and paths
//     that leave the worktree are left out too. Blobs are written with
//     `git hash-object -w` (--path, --stdin-paths), so the file's filters
//     apply; the parent's trees along the paths are read in one `git
//     cat-file --batch`.
//   - [Repo.Commit] builds the tree. When no hook runs, from the parent's
//     trees: each changed directory's tree is computed here and written
//     in one `git mktree --batch` (no index at all: the user's is the
//     only one written, once). When a hook runs, or a file takes a
//     directory's place, in a temporary index (GIT_INDEX_FILE: read-tree
//     of the parent, update-index of the agent's entries, write-tree)
//     that the hooks see. It runs the user's hooks as `git commit` would
//     (pre-commit with that index, prepare-commit-msg, commit-msg,
//     post-commit, from core.hooksPath or the hooks directory), makes the
//     commit with commit-tree and moves HEAD with `update-ref HEAD new old`
//     (compare-and-swap: a branch that moved meanwhile is never
//     overwritten). The user's worktree is left as it was; the index
//     follows the commit file by file ([Repo.SyncIndex]): an entry still
//     at the parent's version moves to the commit's, one where the user
//     staged something else gets the agent's hunks merged in (`git
//     merge-file`), so that the user's next `git commit` keeps both, or
//     is left and reported when they overlap; a held index.lock is waited
//     for briefly, then reported for a retry. Nothing is committed while a merge, rebase,
//     cherry-pick, revert, am or bisect is in progress.
//   - [Revert] takes one or several agent commits back: their agent
//     hunks leave the worktree by a reverse three-way merge (`git
//     merge-file`), so that the user's later edits stay; the branch moves
//     back (compare-and-swap) when they are its newest unpushed commits,
//     else a revert commit takes them back keeping later commits'
//     changes. A file where that cannot be done cleanly makes it refuse,
//     naming the file, or (LeaveConflicts, a rewind) is left as it is and
//     named while the other files are taken back. Revert plans the
//     worktree's side and writes no file: it returns the restores
//     (Reverted.Restores, each with the content it was planned from, read
//     without following links), hands them to RevertOptions.Planned just
//     before the branch moves (so the caller can journal them), and the
//     caller applies them through package worktree afterwards.
//
// It writes no user file at all: package worktree is the only writer.
package gitcommit
