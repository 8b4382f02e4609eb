// Package workspace runs the agent of each workspace folder.
//
// A Host holds the open folders and the overlay of the documents open in
// the editor. A Folder holds what its conversations share: the file
// watcher (folder_watcher.go), the configuration (folder_config.go), the
// MCP servers (mcp.go), the project's AGENTS.md files (instructions.go),
// the model's context window (context.go), the repository it was opened
// or trusted with (gitrepo.go) and the worktree lock its conversations
// share.
//
// A Conversation (conversation.go) is one conversation of a folder: a
// pure fsm.Machine owned by one goroutine, which performs the machine's
// actions (actions.go: model requests, tool runs in toolrun.go, the
// post-tool hook in hook.go) and journals every event it accepts
// (conversation_journal.go), so that a restart replays it.
// conversations.go lists a folder's journaled conversations and loads
// one. Which files a command changed, and their report, are the
// folder's command attribution (commandchanges.go: commandAttribution,
// over the command windows of cmdwindow.go and the pre-images of
// preimage.go), not the conversation's.
//
// The packages below it, which import nothing of it:
//
//   - changes: the change verbs, each a method of the conversation's
//     changes.Tree (which holds the folder's writer, the repository
//     check and the worktree lock): the post-tool hook's commit and the
//     decision on the user's git hooks, loom.commit and loom.discard of
//     the commands' changes, loom.undo, the undo of one file, rewind and
//     redo, the completion of an interrupted commit or revert on resume.
//     Each verb returns a changes.Outcome (what to journal, the branch to
//     move, the event to step, the notes); the conversation's ChangeVerbs
//     (changeapply.go, Conversation.Changes) apply it in the one order
//     Outcome documents. The Tree reads the conversation through
//     treePort.Read (treeport.go), the editor's buffers through
//     folderEditor.
//     Its changes.Review keeps the proposals under tools.edits = "review"
//     and takes the user's decisions on them (Conversation.Review); the
//     glue — proposing from the tools' workers, a command's review, the
//     batch that goes on after a resumed review — is review.go.
//   - journal: the journal's codec (its records, the file that appends
//     them, reading and replaying, the per-journal lock and what the
//     conversation lists read).
//   - worktree: the one writer of the user's files (beneath the folder
//     without following links, protected names refused, compared with
//     the expected content at the rename): a tool's edit (writer.go), a
//     review decision, a discard and every restore go through it.
//   - gitcommit: the git work (plans, commits, reverts as planners);
//     review: a change's hunks; diagnostics: the language servers;
//     agentfiles: skills, commands and hook files of the folder.
//
// The package talks to the editor only through the Editor port
// (editor.go), which the LSP, ACP and headless front ends implement;
// everything it sends there is masked by the host's redactor (redact.go).
package workspace
