// Package gitworktree gives a conversation a git worktree of its own,
// outside the user's tree: under loom's state directory
// (<state>/worktrees/<name>), never inside the workspace.
//
// A [Manager] creates, lists, removes and recovers them:
//
//   - Create checks the repository's HEAD out (detached) with git
//     worktree add, through internal/gitcmd (no hook, fsmonitor, pager or
//     other program of the repository's configuration runs), copies the
//     untracked files .worktreeinclude names (as Claude Code does: .env
//     and the like, regular files only, never through a symbolic link),
//     and records its owner — the user's folder, the conversation, the
//     process and its start time — in a manifest (<name>.json beside the
//     worktree), written before the worktree so that a crash at any
//     point leaves a manifest to find.
//   - List reads the manifests: owner, state, whether the owner still
//     runs, size on disk (build outputs included), and what the worktree
//     holds that the user's tree does not.
//   - Remove runs git worktree remove and git worktree prune, then drops
//     the manifest.
//   - Recover runs on start: a worktree whose owner is gone (killed) is
//     an orphan; one that holds nothing unmerged is removed, one that
//     holds changes is kept and named, so that no orphan is ever left
//     silently.
//   - Changes and Merge bring a worktree's work back: the files it
//     changed against the commit it started from, applied three-way
//     onto the user's current tree (package review), so that what the
//     user changed meanwhile stays; a hunk that overlaps the user's edit
//     is a conflict, left out and named, and the worktree is kept. The
//     user's files are written only through package worktree's writer.
//
// It knows git and files, nothing of conversations or editors.
package gitworktree
