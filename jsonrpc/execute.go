package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// codeRequestFailed is LSP's RequestFailed: the request was valid but
// could not be carried out (no model configured, session closed, …).
const codeRequestFailed jsonrpc2.Code = -32803

// command is one workspace/executeCommand command.
type command struct {
	name string
	// run decodes the argument and runs the command.
	run runner
}

// runner runs a command from its raw argument; arg is the argument's Go
// type (for the generated protocol reference, see wire.go).
type runner struct {
	call func(s *Server, ctx context.Context, arg json.RawMessage) (any, error)
	arg  reflect.Type
}

// commandList holds every command, in the order initialize lists them.
var commandList = []command{
	{CmdAsk, typed(CmdAsk, commandHandler.runAsk)},
	{CmdCancel, typed(CmdCancel, commandHandler.runCancel)},
	{CmdReset, typed(CmdReset, commandHandler.runReset)},
	{CmdStatus, typed(CmdStatus, commandHandler.runStatus)},
	{CmdHistory, typed(CmdHistory, commandHandler.runHistory)},
	{CmdUndo, typed(CmdUndo, commandHandler.runUndo)},
	{CmdUndoFile, typed(CmdUndoFile, commandHandler.runUndoFile)},
	{CmdCompact, typed(CmdCompact, commandHandler.runCompact)},
	{CmdCommit, typed(CmdCommit, commandHandler.runCommit)},
	{CmdDiscard, typed(CmdDiscard, commandHandler.runDiscard)},
	{CmdCommandChanges, typed(CmdCommandChanges, commandHandler.runCommandChanges)},
	{CmdTrust, typed(CmdTrust, commandHandler.runTrust)},
	{CmdMCPLogin, typed(CmdMCPLogin, commandHandler.runMCPLogin)},
	{CmdMCPLogout, typed(CmdMCPLogout, commandHandler.runMCPLogout)},
	{CmdMCPResources, typed(CmdMCPResources, commandHandler.runMCPResources)},
	{CmdRules, typed(CmdRules, commandHandler.runRules)},
	{CmdAddRule, typed(CmdAddRule, commandHandler.runAddRule)},
	{CmdRemoveRule, typed(CmdRemoveRule, commandHandler.runRemoveRule)},
	{CmdModels, typed(CmdModels, commandHandler.runModels)},
	{CmdSetModel, typed(CmdSetModel, commandHandler.runSetModel)},
	{CmdSetMode, typed(CmdSetMode, commandHandler.runSetMode)},
	{CmdSetEffort, typed(CmdSetEffort, commandHandler.runSetEffort)},
	{CmdDecidePlan, typed(CmdDecidePlan, commandHandler.runDecidePlan)},
	{CmdReview, typed(CmdReview, commandHandler.runReview)},
	{CmdProposals, typed(CmdProposals, commandHandler.runProposals)},
	{CmdReviewDraft, typed(CmdReviewDraft, commandHandler.runReviewDraft)},
	{CmdPanelState, typed(CmdPanelState, commandHandler.runPanelState)},
	{CmdCheckpoints, typed(CmdCheckpoints, commandHandler.runCheckpoints)},
	{CmdRewind, typed(CmdRewind, commandHandler.runRewind)},
	{CmdRedo, typed(CmdRedo, commandHandler.runRedo)},
	{CmdConversations, typed(CmdConversations, commandHandler.runConversations)},
	{CmdInlineAccepted, typed(CmdInlineAccepted, func(h commandHandler, ctx context.Context, a InlineAcceptedArgs) (any, error) {
		return h.s.inline.accepted(ctx, a)
	})},
	{CmdNewConversation, typed(CmdNewConversation, commandHandler.runNewConversation)},
	{CmdOpenConversation, typed(CmdOpenConversation, commandHandler.runOpenConversation)},
	{CmdRenameConversation, typed(CmdRenameConversation, commandHandler.runRenameConversation)},
	{CmdDeleteConversation, typed(CmdDeleteConversation, commandHandler.runDeleteConversation)},
	{CmdStopSubagent, typed(CmdStopSubagent, commandHandler.runStopSubagent)},
}

// commands indexes commandList by name.
var commands = func() map[string]command {
	m := make(map[string]command, len(commandList))
	for _, c := range commandList {
		m[c.name] = c
	}
	return m
}()

// commandHandler runs the commands (its run methods, one per command,
// named in commandList), for the server s.
type commandHandler struct{ s *Server }

// typed adapts a command function taking its argument type T.
func typed[T any](name string, fn func(commandHandler, context.Context, T) (any, error)) runner {
	return runner{arg: reflect.TypeFor[T](), call: func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		var arg T
		if len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&arg); err != nil {
				return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: bad argument: %v", name, err)
			}
		}
		return fn(commandHandler{s}, ctx, arg)
	}}
}

// executeCommand is the one runner of every command: it decodes the
// arguments, reports work-done progress when the client gave a token,
// and turns errors into JSON-RPC errors (InvalidParams for a bad
// argument, RequestCancelled when cancelled, RequestFailed otherwise).
func (s *Server) executeCommand(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p protocol.ExecuteCommandParams
	if err := decodeParams(protocol.MethodWorkspaceExecuteCommand, raw, &p); err != nil {
		return nil, err
	}
	cmd, ok := commands[p.Command]
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q; the commands are %s",
			p.Command, strings.Join(commandNames(), ", "))
	}
	if len(p.Arguments) > 1 {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: takes one argument (an object), got %d", cmd.name, len(p.Arguments))
	}
	var arg json.RawMessage
	if len(p.Arguments) == 1 {
		arg = json.RawMessage(p.Arguments[0])
		if k := firstByte(arg); k != '{' && k != 'n' {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: the argument must be a JSON object, got %s", cmd.name, truncate(string(arg), 40))
		}
	}
	if p.WorkDoneToken != nil {
		s.clientProgress(p.WorkDoneToken, "begin", cmd.name)
		defer s.clientProgress(p.WorkDoneToken, "end", "")
	}
	// Every command sees the client's settings, even one sent before the
	// client answered the first workspace/configuration.
	s.waitFirstSettings(ctx)
	result, err := cmd.run.call(s, ctx, arg)
	if err == nil {
		return result, nil
	}
	var wire *jsonrpc2.Error
	switch {
	case ctx.Err() != nil:
		return nil, protocol.ErrRequestCancelled
	case errors.As(err, &wire):
		return nil, err
	default:
		s.log.Info("command failed", "command", cmd.name, "err", err)
		return nil, jsonrpc2.NewError(codeRequestFailed, commandError(cmd.name, err))
	}
}

func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// session finds the conversation for a command's uri and conversation
// arguments: the folder's most recent one when no id is given (clients
// that know nothing of conversations), else that one, opened from its
// journal if need be; it becomes the folder's most recent.
func (s *Server) session(name, rawURI string, conversation ...string) (*workspace.Conversation, error) {
	f, err := s.folder(name, rawURI)
	if err != nil {
		return nil, err
	}
	id := ""
	if len(conversation) > 0 {
		id = conversation[0]
	}
	sess, err := f.Conversation(id)
	switch {
	case errors.Is(err, workspace.ErrUnknownConversation):
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", name, err)
	case err != nil:
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", name, err))
	}
	f.Touch(sess)
	return sess, nil
}

// folder finds the workspace folder of a command's uri argument.
func (s *Server) folder(name, rawURI string) (*workspace.Folder, error) {
	var path string
	if rawURI != "" {
		p, err := uriPath(uri.URI(rawURI))
		if err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: bad uri: %v", name, err)
		}
		path = p
	}
	f, err := s.host.Folder(path)
	if err != nil {
		if rawURI != "" {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", name, err)
		}
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: %v", name, err))
	}
	return f, nil
}

func (h commandHandler) runAsk(ctx context.Context, a AskArgs) (any, error) {
	s := h.s
	if strings.TrimSpace(a.Prompt) == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: prompt is required (a non-empty string)", CmdAsk)
	}
	if a.Selection != nil && a.URI == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: a selection needs the uri of its document", CmdAsk)
	}
	sess, err := s.session(CmdAsk, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	prompt := a.Prompt
	if a.Selection != nil {
		ctxText, err := s.selectionContext(sess.Folder().Path(), a.URI, *a.Selection)
		if err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: selection: %v", CmdAsk, err)
		}
		prompt += "\n\n" + ctxText
	}
	if len(a.Context) > 0 {
		items, err := contextItems(a.Context)
		if err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdAsk, err)
		}
		if prompt, err = s.host.PromptWithContext(ctx, sess.Folder().Path(), prompt, items); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdAsk, err)
		}
	}
	images, err := readImages(sess.Folder().Path(), a.Images)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdAsk, err)
	}
	turn, err := sess.AskWithImages(ctx, prompt, images)
	if errors.Is(err, workspace.ErrImage) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdAsk, err)
	}
	if err != nil {
		return nil, err
	}
	return &AskResult{Folder: sess.Folder().Path(), Turn: turn, Conversation: sess.ID()}, nil
}

func (h commandHandler) runCancel(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdCancel, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	return nil, sess.Cancel(ctx)
}

func (h commandHandler) runCompact(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdCompact, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	return nil, sess.Compact(ctx)
}

func (h commandHandler) runReset(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdReset, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	return nil, sess.Reset(ctx)
}

func (h commandHandler) runStatus(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdStatus, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	st, err := sess.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &st, nil
}

func (h commandHandler) runHistory(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdHistory, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	msgs, err := sess.History(ctx)
	if err != nil {
		return nil, err
	}
	out := &HistoryResult{Folder: sess.Folder().Path(), Messages: historyMessages(msgs)}
	kids, err := sess.Children(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		out.Children = append(out.Children, SubagentHistory{SubagentParams: *subagentParams(sess.Folder().Path(), sess.ID(), &k.Info), Messages: historyMessages(k.Messages)})
	}
	return out, nil
}

// historyMessages is a transcript as loom.history gives it.
func historyMessages(msgs []fsm.Message) []HistoryMessage {
	out := make([]HistoryMessage, 0, len(msgs))
	for _, m := range msgs {
		hm := HistoryMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Note: m.Note}
		if m.Role == fsm.RoleUser && !m.Note {
			var chips []workspace.ContextChip
			hm.Content, chips = workspace.SplitPrompt(m.Content)
			hm.Context = historyChips(chips)
		}
		for _, c := range m.ToolCalls {
			hm.ToolCalls = append(hm.ToolCalls, HistoryToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, View: workspace.ViewTool(c.Name, c.Arguments)})
		}
		out = append(out, hm)
	}
	return out
}

func (h commandHandler) runCommit(ctx context.Context, a PathsArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdCommit, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	var msg string
	if len(a.Paths) > 0 {
		msg, err = sess.Changes().KeepCommandChanges(ctx, a.Paths)
	} else {
		msg, err = sess.Changes().CommitPending(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &UndoResult{Folder: sess.Folder().Path(), Message: msg}, nil
}

func (h commandHandler) runDiscard(ctx context.Context, a PathsArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdDiscard, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	msg, err := sess.Changes().DiscardCommandChanges(ctx, a.Paths)
	if err != nil {
		return nil, err
	}
	return &UndoResult{Folder: sess.Folder().Path(), Message: msg}, nil
}

func (h commandHandler) runCommandChanges(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdCommandChanges, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	cs, err := sess.Changes().CommandChanges(ctx)
	if err != nil {
		return nil, err
	}
	return &CommandChangesResult{Folder: sess.Folder().Path(), Changes: commandChanges(cs)}, nil
}

func (h commandHandler) runUndo(ctx context.Context, a UndoArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdUndo, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	msg, err := sess.Changes().Undo(ctx, a.SHA)
	if err != nil {
		return nil, err
	}
	return &UndoResult{Folder: sess.Folder().Path(), Message: msg}, nil
}

func (h commandHandler) runUndoFile(ctx context.Context, a UndoFileArgs) (any, error) {
	s := h.s
	if a.Path == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: path is required", CmdUndoFile)
	}
	sess, err := s.session(CmdUndoFile, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	msg, err := sess.Changes().UndoFile(ctx, a.Path, a.Commits)
	if err != nil {
		return nil, err
	}
	return &UndoResult{Folder: sess.Folder().Path(), Message: msg}, nil
}

func (h commandHandler) runTrust(_ context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdTrust, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	folder, err := s.host.TrustFolder(sess.Folder().Path())
	if err != nil {
		return nil, err
	}
	return &TrustResult{Folder: folder}, nil
}

// commandError is a failed command's message: the command's name once,
// then why (an error that names the command already is not prefixed
// again).
func commandError(name string, err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, name+": ") {
		msg = strings.TrimPrefix(msg, name+": ")
	}
	return name + ": " + msg
}
