// Package jsonrpc is loom-lsp's LSP front end: a JSON-RPC 2.0 server over
// Content-Length frames (go.lsp.dev/jsonrpc2 v1, go.lsp.dev/protocol v1)
// that hosts one workspace.Conversation per workspace folder and implements
// workspace.Editor for them.
//
// # Wiring
//
// Every incoming message is read by jsonrpc2's single read goroutine and
// passed to [Server]'s own thin handler chain, not protocol.Handlers
// (which releases every message, notifications included, to run
// concurrently and so can reorder didChange):
//
//   - Notifications (didOpen, didChange, didClose, $/cancelRequest, …) run
//     inline on the read goroutine, in wire order. They never wait for a
//     session or for the client, so they cannot deadlock the read loop.
//   - Requests are checked against the lifecycle inline (so "after
//     shutdown" is judged in wire order), registered for $/cancelRequest,
//     and then released with jsonrpc2.Async to run concurrently: a request
//     may call back into the client (applyEdit, showMessageRequest,
//     loom/saveDocuments) whose response the read goroutine must be free to
//     read.
//   - A panic or error in one handler is recovered, logged and reported
//     (window/logMessage, plus an error response for a request); it never
//     ends the connection.
//
// # Outbound
//
// Session notifications go to a per-folder outbox drained by one goroutine,
// so Editor.Notify never blocks a session. The outbox coalesces streamed
// text to at most one loom/displayMessage per window (16 ms) and flushes
// pending text before any other notification of the same folder, so order
// holds and no byte is lost.
package jsonrpc
