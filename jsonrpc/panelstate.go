package jsonrpc

import (
	"context"
	"errors"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// CmdPanelState returns everything a chat panel draws of a folder in one
// request, for a panel that (re)opens, e.g. after a window reload:
// PanelStateArgs -> PanelStateResult. It stands for loom.conversations,
// loom.openConversation, loom.status, loom.history, loom.proposals and
// loom.commandChanges asked one after the other.
const CmdPanelState = "loom.panelState"

// PanelStateArgs are loom.panelState's arguments: the folder, and the
// conversation the panel showed last ("" or one this process cannot open:
// the folder's most recent).
type PanelStateArgs = FolderArgs

// PanelStateResult is loom.panelState's reply.
type PanelStateResult struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation drawn: the one asked
	// for, else the folder's most recent.
	Conversation string `json:"conversation"`
	// Conversations is the folder's list (loom.conversations).
	Conversations []ConversationItem `json:"conversations"`
	// Status, History, Proposals and CommandChanges are what
	// loom.status, loom.history, loom.proposals and loom.commandChanges
	// answer for that conversation.
	Status         *workspace.Status       `json:"status"`
	History        *HistoryResult          `json:"history"`
	Proposals      []ProposedChangesParams `json:"proposals"`
	CommandChanges []CommandChange         `json:"commandChanges"`
}

func (h commandHandler) runPanelState(ctx context.Context, a PanelStateArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdPanelState, a.URI, a.Conversation)
	if err != nil && a.Conversation != "" {
		// Gone, or open in another window: the folder's most recent.
		sess, err = s.session(CmdPanelState, a.URI)
	}
	if err != nil {
		return nil, err
	}
	args := FolderArgs{URI: string(s.clientURI(sess.Folder().Path())), Conversation: sess.ID()}
	out := &PanelStateResult{Folder: sess.Folder().Path(), Conversation: sess.ID()}
	parts := []struct {
		run  func(context.Context, FolderArgs) (any, error)
		into func(any)
	}{
		{func(ctx context.Context, a FolderArgs) (any, error) {
			return h.runConversations(ctx, FolderArgs{URI: a.URI})
		},
			func(v any) { out.Conversations = v.([]ConversationItem) }},
		{h.runStatus, func(v any) { out.Status = v.(*workspace.Status) }},
		{h.runHistory, func(v any) { out.History = v.(*HistoryResult) }},
		{h.runProposals, func(v any) { out.Proposals = v.(*ProposalsResult).Proposals }},
		{h.runCommandChanges, func(v any) { out.CommandChanges = v.(*CommandChangesResult).Changes }},
	}
	var errs []error
	for _, p := range parts {
		v, err := p.run(ctx, args)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.into(v)
	}
	if out.Status == nil || out.History == nil {
		return nil, errors.Join(errs...)
	}
	if out.Conversations == nil {
		out.Conversations = []ConversationItem{}
	}
	if out.Proposals == nil {
		out.Proposals = []ProposedChangesParams{}
	}
	if out.CommandChanges == nil {
		out.CommandChanges = []CommandChange{}
	}
	return out, nil
}
