// Package workspace runs the agent of each workspace folder.
//
// A Host holds the open folders and the overlay of the documents open in
// the editor. A Folder holds what its conversations share: the file
// watcher (folder_watcher.go), the configuration (folder_config.go), the
// MCP servers (mcp.go), the project's AGENTS.md files (instructions.go),
// the model's context window (context.go) and the git side of the
// auto-commit (hook.go, commitjournal.go, undo.go; package gitcommit does
// the git work).
//
// A Conversation (conversation.go) is one conversation of a folder: a
// pure fsm.Machine owned by one goroutine, which performs the machine's
// actions (actions.go: model requests, tool runs in toolrun.go, the
// post-tool hook in hook.go) and journals every event it accepts
// (conversation_journal.go), so that a restart replays it.
// conversations.go lists a folder's journaled conversations and loads
// one. Package journal is the journal's codec (its records, the file
// that appends them, reading and replaying, the per-journal lock and
// what the lists read); it imports nothing of this package.
//
// Every user file loom writes, restores or deletes goes through package
// worktree, the one writer (beneath the folder without following links,
// protected names refused, compared with the expected content at the
// rename): a tool's edit and a review decision (writer.go), a discard
// (commandchanges.go), and the restores of an undo, an undo of one file,
// a rewind or a redo (restores.go), which gitcommit.Revert plans and
// which are journaled before the branch moves, so that a resumed
// conversation finishes restores a daemon's death cut short.
//
// The package talks to the editor only through the Editor port
// (editor.go), which the LSP, ACP and headless front ends implement;
// everything it sends there is masked by the host's redactor (redact.go).
package workspace
