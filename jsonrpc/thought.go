package jsonrpc

import (
	"context"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// sendThought sends a piece of the model's reasoning to a client that
// declares experimental.loom, as loom/displayMessage with kind "thought".
// It is not part of the answer. A client without experimental.loom gets
// nothing: its log would mix the reasoning with the answer.
func (f *folderOut) sendThought(caps clientCaps, n workspace.Notification) {
	if !caps.loom || n.Text == "" {
		return
	}
	f.seq++
	f.s.notify(context.Background(), MethodDisplayMessage, &DisplayMessageParams{
		Folder: f.folder, Turn: n.Turn, Seq: f.seq, Text: n.Text, Kind: KindThought,
	})
}

// stateParams is the loom/state of a state notification: at a turn's end
// (WaitingForUserInput) it carries the token usage of the turn and of the
// conversation.
func stateParams(folder string, n workspace.Notification) *StateParams {
	p := &StateParams{Folder: folder, State: n.State, Turn: n.Turn}
	if n.TotalUsage != nil {
		usage := n.Usage
		p.Usage, p.TotalUsage = &usage, n.TotalUsage
	}
	return p
}
