package jsonrpc

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Subagents over LSP: a client that declared experimental.loom is sent
// loom/subagent for each child of a conversation — when it starts, as it
// works (its last activity, its tokens, waiting for an approval) and when
// it ends — and may stop one child with loom.stopSubagent, without
// stopping the parent's turn. The child's own messages and tool calls go
// out as usual under the child's conversation id.
const (
	// MethodSubagent carries SubagentParams.
	MethodSubagent = "loom/subagent"
	// CmdStopSubagent stops one running child of a conversation:
	// StopSubagentArgs -> null.
	CmdStopSubagent = "loom.stopSubagent"
)

// The states of SubagentParams.
const (
	SubagentRunning = "running"
	// SubagentWaiting: one of its permission requests waits for the user.
	SubagentWaiting = "waiting"
	SubagentDone    = "done"
	SubagentFailed  = "failed"
	// SubagentStopped: the user, a cap or the parent's cancel stopped it.
	SubagentStopped = "stopped"
)

// SubagentParams is a child conversation's state, whole: a client keeps
// one card (line) per Child of the conversation and replaces it with
// each notification.
type SubagentParams struct {
	Folder string `json:"folder"`
	// Conversation is the parent's conversation id.
	Conversation string `json:"conversation,omitempty"`
	// Turn is the parent's turn, CallID its agent call.
	Turn   uint64 `json:"turn"`
	CallID string `json:"callId"`
	// Child is the child's id among the parent's children (what
	// loom.stopSubagent takes); ChildConversation is the child's
	// conversation id, which its own notifications carry.
	Child             string `json:"child"`
	ChildConversation string `json:"childConversation,omitempty"`
	// Agent is the name of the child's definition (researcher, worker,
	// a user's agent), Task what it was asked.
	Agent    string `json:"agent"`
	Task     string `json:"task"`
	Depth    int    `json:"depth"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	// Model is the model its definition chose among the user's
	// [subagents] models; absent: the conversation's.
	Model string `json:"model,omitempty"`
	// State is running, waiting (for the user's approval), done,
	// failed or stopped.
	State string `json:"state"`
	// Activity is what it did last ("read_file succeeded", "waits for
	// your approval: bash …"); absent when it starts.
	Activity string `json:"activity,omitempty"`
	// Tokens is what it used so far (its total at its end).
	Tokens int64 `json:"tokens"`
}

// StopSubagentArgs name the child to stop: Child of the conversation
// (SubagentParams.Child).
type StopSubagentArgs struct {
	URI          string `json:"uri,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Child        string `json:"child"`
}

// subagentParams is the wire form of a parent's note about its child.
func subagentParams(folder, conversation string, info *workspace.SubagentInfo) *SubagentParams {
	p := &SubagentParams{Folder: folder, Conversation: conversation, Turn: info.Turn, CallID: info.CallID, Child: info.Child,
		ChildConversation: info.Conversation, Agent: info.Agent, Task: info.Task, Depth: info.Depth, ReadOnly: info.ReadOnly,
		Model: info.Model, State: info.State, Activity: info.Activity}
	switch info.State {
	case "completed":
		p.State = SubagentDone
	case "cancelled":
		p.State = SubagentStopped
	}
	if info.Usage != nil {
		p.Tokens = info.Usage.TotalTokens
	}
	return p
}

// SubagentChanged sends loom/subagent to a loom client; other clients
// see the child's progress on the parent's agent call.
func (f *folderOut) SubagentChanged(n workspace.SubagentChanged) {
	if n.Subagent == nil || !f.caps().loom {
		return
	}
	f.s.notify(context.Background(), MethodSubagent, subagentParams(f.folder, f.conversation, n.Subagent))
}

// runStopSubagent stops a.Child, a descendant of a.Conversation at any
// depth; a.Conversation may itself be a child's conversation (a
// grandchild's card names its parent's): then the folder's open
// conversations are asked for it.
func (h commandHandler) runStopSubagent(ctx context.Context, a StopSubagentArgs) (any, error) {
	sess, err := h.s.session(CmdStopSubagent, a.URI, a.Conversation)
	if err == nil {
		err = sess.StopSubagent(ctx, a.Child)
	} else if f, ferr := h.s.folder(CmdStopSubagent, a.URI); ferr == nil && a.Conversation != "" {
		err = workspace.ErrNoSubagent
		for _, c := range f.Open() {
			// The child's own id may repeat under other parents: its
			// conversation's names it alone, with its parent's.
			if err = c.StopSubagentOf(ctx, a.Conversation, a.Child); !errors.Is(err, workspace.ErrNoSubagent) {
				break
			}
		}
	}
	if errors.Is(err, workspace.ErrNoSubagent) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdStopSubagent, err)
	}
	return nil, err
}
