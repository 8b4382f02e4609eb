package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// The conversations of a folder: each command above takes an optional
// conversation id (default: the folder's most recent); these list, start,
// open, rename and delete them.
const (
	// CmdConversations lists the conversations of the folder of uri (of
	// every open folder without one), most recent first:
	// FolderArgs -> []ConversationItem.
	CmdConversations = "loom.conversations"
	// CmdNewConversation starts a conversation beside the others, which
	// goes on running: FolderArgs -> ConversationItem.
	CmdNewConversation = "loom.newConversation"
	// CmdOpenConversation opens a journaled conversation, leaving the
	// others as they are, and makes it the folder's most recent:
	// ConversationArgs -> ConversationItem.
	CmdOpenConversation = "loom.openConversation"
	// CmdRenameConversation sets a conversation's title ("" goes back to
	// its first prompt's): ConversationArgs -> ConversationItem.
	CmdRenameConversation = "loom.renameConversation"
	// CmdDeleteConversation closes a conversation and moves its journal
	// to the trash, kept for [journal] max_age: ConversationArgs -> null.
	CmdDeleteConversation = "loom.deleteConversation"
)

// ConversationArgs names a conversation of a folder.
type ConversationArgs struct {
	// URI selects the folder (see FolderArgs).
	URI string `json:"uri,omitempty"`
	// ID is the conversation's id; required.
	ID string `json:"id"`
	// Title is loom.renameConversation's new title.
	Title string `json:"title,omitempty"`
}

// ConversationItem describes one conversation.
type ConversationItem struct {
	ID     string `json:"id"`
	Folder string `json:"folder"`
	// Title is the first prompt's first line, or the title set; "" for
	// a conversation with no prompt yet.
	Title string `json:"title"`
	// Updated is when it was last used (RFC 3339).
	Updated string    `json:"updated,omitempty"`
	Turns   int       `json:"turns"`
	Usage   fsm.Usage `json:"usage"`
	// Live marks a conversation open in this loom-lsp.
	Live bool `json:"live"`
	// Elsewhere marks one open in another loom process: read-only here
	// (it cannot be opened, renamed nor deleted until that one closes).
	Elsewhere bool `json:"elsewhere,omitempty"`
}

func conversationItem(c workspace.ConversationInfo) ConversationItem {
	it := ConversationItem{ID: c.ID, Folder: c.Folder, Title: c.Title, Turns: c.Turns, Usage: c.Usage, Live: c.Live, Elsewhere: c.Elsewhere}
	if !c.Updated.IsZero() {
		it.Updated = c.Updated.UTC().Format(time.RFC3339)
	}
	return it
}

func (h commandHandler) runConversations(_ context.Context, a FolderArgs) (any, error) {
	s := h.s
	var folders []string
	if a.URI == "" && len(s.host.Folders()) != 1 {
		folders = s.host.Folders()
	} else {
		f, err := s.folder(CmdConversations, a.URI)
		if err != nil {
			return nil, err
		}
		folders = []string{f.Path()}
	}
	out := []ConversationItem{}
	for _, folder := range folders {
		all, err := s.host.Conversations(folder)
		if err != nil {
			return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", CmdConversations, err))
		}
		for _, c := range all {
			out = append(out, conversationItem(c))
		}
	}
	return out, nil
}

func (h commandHandler) runNewConversation(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	f, err := s.folder(CmdNewConversation, a.URI)
	if err != nil {
		return nil, err
	}
	c, err := f.New()
	if err != nil {
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", CmdNewConversation, err))
	}
	return s.describe(ctx, CmdNewConversation, c)
}

func (h commandHandler) runOpenConversation(ctx context.Context, a ConversationArgs) (any, error) {
	s := h.s
	c, err := s.named(CmdOpenConversation, a)
	if err != nil {
		return nil, err
	}
	return s.describe(ctx, CmdOpenConversation, c)
}

func (h commandHandler) runRenameConversation(ctx context.Context, a ConversationArgs) (any, error) {
	s := h.s
	f, err := s.folderOf(CmdRenameConversation, a)
	if err != nil {
		return nil, err
	}
	if err := f.Rename(ctx, a.ID, a.Title); err != nil {
		return nil, conversationError(CmdRenameConversation, err)
	}
	all, err := s.host.Conversations(f.Path())
	if err == nil {
		for _, c := range all {
			if c.ID == a.ID {
				return conversationItem(c), nil
			}
		}
	}
	return ConversationItem{ID: a.ID, Folder: f.Path(), Title: strings.TrimSpace(a.Title)}, nil
}

func (h commandHandler) runDeleteConversation(_ context.Context, a ConversationArgs) (any, error) {
	s := h.s
	f, err := s.folderOf(CmdDeleteConversation, a)
	if err != nil {
		return nil, err
	}
	if err := f.Delete(a.ID); err != nil {
		return nil, conversationError(CmdDeleteConversation, err)
	}
	return nil, nil
}

// folderOf checks a's id and finds its folder.
func (s *Server) folderOf(name string, a ConversationArgs) (*workspace.Folder, error) {
	if strings.TrimSpace(a.ID) == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: id is required (a conversation id from %s)", name, CmdConversations)
	}
	return s.folder(name, a.URI)
}

// named opens the conversation a names and makes it the most recent.
func (s *Server) named(name string, a ConversationArgs) (*workspace.Conversation, error) {
	f, err := s.folderOf(name, a)
	if err != nil {
		return nil, err
	}
	c, err := f.Conversation(a.ID)
	if err != nil {
		return nil, conversationError(name, err)
	}
	f.Touch(c)
	return c, nil
}

// conversationError is the wire error of a conversation command.
func conversationError(name string, err error) error {
	if errors.Is(err, workspace.ErrUnknownConversation) {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", name, err)
	}
	return jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", name, err))
}

// describe is the ConversationItem of an open conversation.
func (s *Server) describe(ctx context.Context, name string, c *workspace.Conversation) (any, error) {
	info, err := c.Conversation(ctx)
	if err != nil {
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", name, err))
	}
	if info.ID == "" {
		info.ID = c.ID()
	}
	info.Folder = c.Folder().Path()
	return conversationItem(info), nil
}
