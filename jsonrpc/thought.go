package jsonrpc

import (
	"context"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// ReasoningDelta sends a piece of the model's reasoning, as
// loom/displayMessage with kind "thought", to a client that declares
// experimental.loom.thoughts. Other clients get nothing: one that knows
// loom/displayMessage but not its kind would show the reasoning as part
// of the answer, and a generic client's log would mix the two.
func (f *folderOut) ReasoningDelta(n workspace.ReasoningDelta) {
	if caps := f.caps(); !caps.loom || !caps.thoughts || n.Text == "" {
		return
	}
	f.s.notify(context.Background(), MethodDisplayMessage, &DisplayMessageParams{
		Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Seq: f.seq.Add(1), Text: n.Text, Kind: KindThought,
	})
}

// stateParams is the loom/state of a state notification: at a turn's end
// (WaitingForUserInput) it carries the token usage of the turn and of the
// conversation.
func stateParams(folder, conversation string, n workspace.StateChanged) *StateParams {
	p := &StateParams{Folder: folder, Conversation: conversation, State: n.State, Turn: n.Turn}
	if n.TotalUsage != nil {
		usage := n.Usage
		p.Usage, p.TotalUsage = &usage, n.TotalUsage
	}
	return p
}
