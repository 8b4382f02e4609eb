package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// editor is the server's workspace.Editor: the sessions' way out to the
// LSP client.
type editor struct{ s *Server }

var _ workspace.Editor = (*editor)(nil)

// Notify queues n on its folder's outbox; it never blocks. After the
// teardown has started, n is dropped.
// ReviewsTogether implements workspace.ReviewPanel: a client that shows
// loom/proposedChanges (experimental.loom.review) draws every proposal
// as its own card.
func (e *editor) ReviewsTogether() bool {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.caps.review
}

func (e *editor) Notify(n workspace.Notification) {
	if b := e.s.outboxFor(n.Folder, n.Conversation); b != nil {
		b.push(n)
	} else {
		e.s.log.Debug("dropped a notification after teardown", "folder", n.Folder, "kind", n.Kind)
	}
}

// outboxFor returns the outbox of a conversation of folder ("" for the
// folder's own notices), starting it if needed, or nil
// once the teardown has collected the outboxes: an outbox started then
// would never be closed, and the teardown would wait for it forever.
func (s *Server) outboxFor(folder, conversation string) *outbox {
	key := folder + "\x00" + conversation
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.outboxes[key]; ok {
		return b
	}
	if s.tornDown {
		return nil
	}
	seq := s.seqs[folder]
	if seq == nil {
		seq = new(atomic.Uint64)
		s.seqs[folder] = seq
	}
	b := newOutbox(s, folder, conversation, seq)
	s.outboxes[key] = b
	s.goBackground(b.run)
	return b
}

// closeOutbox closes a removed folder's outbox without waiting: it
// drains on its own goroutine.
func (s *Server) closeOutbox(folder string) {
	s.mu.Lock()
	var boxes []*outbox
	for key, b := range s.outboxes {
		if b.folder == folder {
			boxes = append(boxes, b)
			delete(s.outboxes, key)
		}
	}
	s.mu.Unlock()
	for _, b := range boxes {
		b.close(0)
	}
}

// ApplyEdit sends workspace/applyEdit with a versioned TextDocumentEdit.
func (e *editor) ApplyEdit(ctx context.Context, de workspace.DocumentEdit) error {
	s := e.s
	s.mu.Lock()
	ok, versioned := s.caps.applyEdit, s.caps.versionedEdits
	s.mu.Unlock()
	if !ok {
		return workspace.ErrUnsupported
	}
	label := "Loom: edit " + filepath.Base(de.Path)
	params := &protocol.ApplyWorkspaceEditParams{Label: &label}
	if versioned {
		edits := make([]protocol.TextDocumentEditElement, 0, len(de.Edits))
		for _, te := range de.Edits {
			edits = append(edits, &protocol.TextEdit{Range: lspRange(te.Range), NewText: te.NewText})
		}
		version := de.Version
		params.Edit.DocumentChanges = []protocol.DocumentChange{
			&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
					TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: s.clientURI(de.Path)},
					Version:                &version,
				},
				Edits: edits,
			},
		}
	} else {
		// The client cannot check versions (e.g. Neovim without our plugin
		// does not declare documentChanges). The session checked that the
		// buffer still held the text the edit was computed from; sending it
		// unversioned beats writing under an open buffer.
		edits := make([]protocol.TextEdit, 0, len(de.Edits))
		for _, te := range de.Edits {
			edits = append(edits, protocol.TextEdit{Range: lspRange(te.Range), NewText: te.NewText})
		}
		params.Edit.Changes = map[uri.URI][]protocol.TextEdit{s.clientURI(de.Path): edits}
	}
	var res protocol.ApplyWorkspaceEditResult
	if err := s.callClient(ctx, protocol.MethodWorkspaceApplyEdit, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return workspace.ErrUnsupported
		}
		return fmt.Errorf("workspace/applyEdit %s: %w", de.Path, err)
	}
	if !res.Applied {
		reason := "no reason given"
		if res.FailureReason != nil && *res.FailureReason != "" {
			reason = *res.FailureReason
		}
		return fmt.Errorf("%w: %s (%s)", workspace.ErrEditRejected, filepath.Base(de.Path), reason)
	}
	return nil
}

// clientURI is the URI to name path by to the client: the one the client
// opened the document under, else path's file URI.
func (s *Server) clientURI(path string) uri.URI {
	if u, ok := s.host.Overlay().ClientURI(path); ok {
		return uri.URI(u)
	}
	return pathURI(path)
}

// The answers of an approval request.
const (
	approveAllow = "Allow"
	approveDeny  = "Deny"
	// approveAlways is offered when the session can remember it (MCP
	// tools: this tool, for the rest of the session).
	approveAlways = "Always allow"
)

// ApprovalRequestParams are window/showMessageRequest's params for an
// approval: LSP's, plus Loom, which our clients read instead of parsing
// the message.
type ApprovalRequestParams struct {
	Type    protocol.MessageType `json:"type"`
	Message string               `json:"message"`
	Actions []ApprovalAction     `json:"actions"`
	Loom    ApprovalInfo         `json:"loom"`
}

// ApprovalInfo says what an approval is about.
type ApprovalInfo struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	CallID       string `json:"callId,omitempty"`
	Tool         string `json:"tool"`
	// Command is the whole bash command (Tool "bash"), untruncated.
	Command string `json:"command,omitempty"`
	// Detail is what would run, for any tool.
	Detail string `json:"detail"`
	// RewrittenFrom, when set, is what the model asked for: a PreToolUse
	// hook rewrote the call, and Command/Detail are what runs.
	RewrittenFrom string `json:"rewrittenFrom,omitempty"`
	// Subagent, when set, names the subagent that asks ("subagent worker
	// 1-w1 (task: …)"): the conversation's child, not the conversation.
	Subagent string `json:"subagent,omitempty"`
}

// RewrittenApprovalWords start the approval message's line that says a
// hook rewrote what is asked.
const RewrittenApprovalWords = "a PreToolUse hook rewrote this; the model asked for: "

// ApprovalAction is one answer of an approval: a MessageActionItem whose
// Rule, when set, is the approval rule the answer saves. A client that
// preserves additional properties may answer with Rule.Prefix edited.
type ApprovalAction struct {
	Title string         `json:"title"`
	Rule  *cmdrules.Rule `json:"rule,omitempty"`
}

// ruleTitle is the action title of a rule, shown by generic clients.
func ruleTitle(r cmdrules.Rule) string {
	if r.Prefix != "" {
		return "Always allow commands starting with `" + clip(r.Prefix, 60) + "`"
	}
	return "Always allow `" + clip(r.Exact, 60) + "`"
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Approve asks with window/showMessageRequest (Allow / Deny, the rules
// the session offers for a bash command, and "Always allow" when the
// session can remember it); a client that does not answer such requests
// (askClient) gets workspace.ErrUnsupported. Dismissing the message
// denies. Only a client that declared experimental.loom gets the loom
// member and the rules in the action items: a generic client gets LSP's
// members only (strict clients such as eglot reject others).
func (e *editor) Approve(ctx context.Context, a workspace.Approval) (bool, error) {
	e.s.mu.Lock()
	loom := e.s.caps.loom
	e.s.mu.Unlock()
	// The text and tool call before the approval go out first.
	if b := e.s.outboxFor(a.Folder, a.Conversation); b != nil {
		b.flush(ctx)
	}
	who := "Loom"
	if a.Subagent != nil {
		who = "Loom's " + a.Subagent.Words() + ","
	}
	msg := fmt.Sprintf("%s (%s) wants to run %s:\n%s", who, filepath.Base(a.Folder), a.Tool, a.Detail)
	if a.Rewritten != "" {
		msg += "\n(" + RewrittenApprovalWords + a.Rewritten + ")"
	}
	params := &ApprovalRequestParams{
		Type: protocol.MessageTypeWarning, Message: msg,
		Actions: []ApprovalAction{{Title: approveAllow}, {Title: approveDeny}},
		Loom:    ApprovalInfo{Folder: a.Folder, Conversation: a.Conversation, Turn: a.Turn, CallID: a.CallID, Tool: a.Tool, Detail: a.Detail, RewrittenFrom: a.Rewritten, Subagent: a.Subagent.Words()},
	}
	if a.Tool == "bash" {
		params.Loom.Command = a.Detail
	}
	if a.Remember != nil {
		for _, r := range []*cmdrules.Rule{a.Exact, a.Prefix} {
			if r != nil {
				params.Actions = append(params.Actions, ApprovalAction{Title: ruleTitle(*r), Rule: r})
			}
		}
	}
	if a.Always != nil {
		params.Actions = append(params.Actions, ApprovalAction{Title: approveAlways})
	}
	var wire any = params
	if !loom {
		std := &protocol.ShowMessageRequestParams{Type: params.Type, Message: params.Message}
		for _, x := range params.Actions {
			std.Actions = append(std.Actions, protocol.MessageActionItem{Title: x.Title})
		}
		wire = std
	}
	var item *ApprovalAction
	if err := e.s.askClient(ctx, msg, wire, &item); err != nil {
		return false, err
	}
	if item == nil {
		return false, nil
	}
	switch item.Title {
	case approveAllow:
		return true, nil
	case approveAlways:
		if a.Always != nil {
			a.Always()
			return true, nil
		}
		return false, nil
	}
	for _, offered := range params.Actions {
		if offered.Rule == nil || offered.Title != item.Title {
			continue
		}
		rule := *offered.Rule
		// An edited prefix comes back in the item; anything else the
		// client sends back is ignored.
		if item.Rule != nil && offered.Rule.Prefix != "" && item.Rule.Prefix != "" {
			rule = cmdrules.Rule{Prefix: item.Rule.Prefix}
		}
		_ = a.Remember(rule) // a bad rule is reported; the command runs once
		return true, nil
	}
	return false, nil
}

// SaveDocumentsParams are loom/saveDocuments' params.
type SaveDocumentsParams struct {
	URIs []string `json:"uris"`
}

// SaveDocumentsResult is loom/saveDocuments' result: the URIs saved.
type SaveDocumentsResult struct {
	Saved []string `json:"saved"`
}

// SaveDocuments asks the client to save documents with
// loom/saveDocuments, when it declared experimental.loom.saveDocuments.
func (e *editor) SaveDocuments(ctx context.Context, paths []string) ([]string, error) {
	s := e.s
	s.mu.Lock()
	ok := s.caps.saveDocuments
	s.mu.Unlock()
	if !ok {
		return nil, workspace.ErrUnsupported
	}
	params := &SaveDocumentsParams{URIs: make([]string, 0, len(paths))}
	asked := make(map[string]string, len(paths)) // URI sent -> the session's path
	for _, p := range paths {
		u := string(s.clientURI(p))
		params.URIs = append(params.URIs, u)
		asked[u] = p
	}
	var res SaveDocumentsResult
	if err := s.callClient(ctx, MethodSaveDocuments, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return nil, workspace.ErrUnsupported
		}
		return nil, fmt.Errorf("%s: %w", MethodSaveDocuments, err)
	}
	saved := make([]string, 0, len(res.Saved))
	for _, u := range res.Saved {
		if p, ok := asked[u]; ok {
			saved = append(saved, p)
			continue
		}
		p, err := uriPath(uri.URI(u))
		if err != nil {
			s.log.Warn("loom/saveDocuments answered a bad uri", "uri", u, "err", err)
			continue
		}
		saved = append(saved, p)
	}
	return saved, nil
}
