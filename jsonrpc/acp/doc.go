// Package acp is the Agent Client Protocol front end of loom-lsp (`loom-lsp
// acp`): ACP v1, JSON-RPC 2.0 as newline-delimited JSON on stdin/stdout,
// on github.com/coder/acp-go-sdk. Zed, the JetBrains IDEs, Emacs
// agent-shell and Neovim's CodeCompanion talk to it.
//
// It is a front end like the LSP server and the headless one: the same
// workspace.Host, sessions, tools, hook and journal serve it, and it
// implements workspace.Editor (and workspace.DocumentStore, so that the
// tools read the user's unsaved buffers through fs/read_text_file and
// write through fs/write_text_file). It only translates:
//
//   - an ACP session is the live conversation of its cwd's workspace
//     session (one state machine per folder). session/new starts a new
//     conversation on that folder — the folder's previous one is set
//     aside in its journal, stays listed by session/list and can be
//     brought back with session/load or session/resume; a session that
//     is no longer its folder's live conversation refuses prompts until
//     it is loaded again. A folder's empty conversation is reused, so two
//     session/new in a row without a prompt give the same id. Session ids
//     come from the journals, so they survive a restart of the process.
//   - the MCP servers of session/new, load and resume become the editor's
//     configuration layer [mcp.servers] (see useMCPServers).
//   - session/prompt becomes one UserInput; it answers when that turn
//     ends. A prompt sent while a turn runs is queued by the state
//     machine, never dropped.
//   - the session's notifications become session/update notifications,
//     sent in order by one goroutine (adjacent text chunks are merged
//     while the client is slow to read).
package acp
