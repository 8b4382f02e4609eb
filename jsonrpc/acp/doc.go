// Package acp is the Agent Client Protocol front end of loom-lsp (`loom-lsp
// acp`): ACP v1, JSON-RPC 2.0 as newline-delimited JSON on stdin/stdout,
// on github.com/coder/acp-go-sdk, and ACP v2 (Preview) beside it, per
// connection, as a mapping at the wire (protocol.go). Zed, the JetBrains IDEs, Emacs
// agent-shell and Neovim's CodeCompanion talk to it.
//
// It is a front end like the LSP server and the headless one: the same
// workspace.Host, sessions, tools, hook and journal serve it, and it
// implements workspace.Editor (and workspace.DocumentStore, so that the
// tools read the user's unsaved buffers through fs/read_text_file and
// write through fs/write_text_file). It only translates:
//
//   - an ACP session is a conversation of its cwd's workspace folder.
//     Each session/new starts a new conversation beside the folder's
//     others (two in a row give two); session/load and session/resume
//     open a journaled one without touching the rest; session/close
//     frees one. Session ids come from the journals, so they survive a
//     restart of the process.
//   - session/new, load and resume advertise the models the server lists
//     (the config option "model", and the unstable models); set_model and
//     set_config_option switch the session's conversation (models.go).
//   - the MCP servers of session/new, load and resume become the editor's
//     configuration layer [mcp.servers] (see useMCPServers).
//   - session/prompt becomes one UserInput; it answers when that turn
//     ends. A prompt sent while a turn runs is queued by the state
//     machine, never dropped.
//   - the session's notifications become session/update notifications,
//     sent in order by one goroutine (adjacent text chunks are merged
//     while the client is slow to read); loom's own notices are agent
//     messages of their own tagged in _meta, held behind a session/load
//     replay (notices.go). A file request (fs/read_text_file,
//     fs/write_text_file) goes out only after the updates queued before
//     it, so the client has seen the tool call that causes it.
package acp
