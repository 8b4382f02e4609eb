package jsonrpc

import (
	"fmt"
	"reflect"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// The wire declared once: the generated references (the TypeScript wire
// types of the VS Code extension, the Lua annotations of the Neovim
// plugin and docs/reference/protocol.md) are made from the command table
// (commandList, with each command's argument type) and the tables below
// by internal/wiregen; its test fails when the committed files differ.
//
//go:generate go run ../internal/wiregen/cmd/wiregen -root ..

// commandResults is each command's result type; a command missing here
// fails the generator (nil: the result is null).
var commandResults = map[string]reflect.Type{
	CmdAsk:                reflect.TypeFor[AskResult](),
	CmdCancel:             nil,
	CmdReset:              nil,
	CmdStatus:             reflect.TypeFor[workspace.Status](),
	CmdHistory:            reflect.TypeFor[HistoryResult](),
	CmdUndo:               reflect.TypeFor[UndoResult](),
	CmdUndoFile:           reflect.TypeFor[UndoResult](),
	CmdCompact:            nil,
	CmdCommit:             reflect.TypeFor[UndoResult](),
	CmdDiscard:            reflect.TypeFor[UndoResult](),
	CmdCommandChanges:     reflect.TypeFor[CommandChangesResult](),
	CmdTrust:              reflect.TypeFor[TrustResult](),
	CmdMCPLogin:           reflect.TypeFor[MCPLoginResult](),
	CmdMCPLogout:          reflect.TypeFor[MCPLoginResult](),
	CmdMCPResources:       reflect.TypeFor[MCPResourcesResult](),
	CmdRules:              reflect.TypeFor[RulesResult](),
	CmdAddRule:            reflect.TypeFor[RulesResult](),
	CmdRemoveRule:         reflect.TypeFor[RulesResult](),
	CmdModels:             reflect.TypeFor[ModelsWire](),
	CmdSetModel:           reflect.TypeFor[SetModelResult](),
	CmdSetMode:            reflect.TypeFor[ModeResult](),
	CmdSetEffort:          reflect.TypeFor[SetEffortResult](),
	CmdDecidePlan:         nil,
	CmdReview:             reflect.TypeFor[workspace.ReviewResult](),
	CmdProposals:          reflect.TypeFor[ProposalsResult](),
	CmdReviewDraft:        nil,
	CmdPanelState:         reflect.TypeFor[PanelStateResult](),
	CmdCheckpoints:        reflect.TypeFor[CheckpointsResult](),
	CmdRewind:             reflect.TypeFor[workspace.RewindResult](),
	CmdRedo:               reflect.TypeFor[workspace.RewindResult](),
	CmdConversations:      reflect.TypeFor[[]ConversationItem](),
	CmdNewConversation:    reflect.TypeFor[ConversationItem](),
	CmdOpenConversation:   reflect.TypeFor[ConversationItem](),
	CmdRenameConversation: reflect.TypeFor[ConversationItem](),
	CmdDeleteConversation: nil,
	CmdInlineAccepted:     nil,
	CmdStopSubagent:       nil,
}

// WireCommand is one workspace/executeCommand command as the generated
// references show it.
type WireCommand struct {
	Name string
	// Args is the type of the command's single argument (a JSON object).
	Args reflect.Type
	// Result is the type of its reply; nil for null.
	Result reflect.Type
}

// WireCommands lists the commands in the order initialize lists them, or
// fails for a command whose result type commandResults does not declare.
func WireCommands() ([]WireCommand, error) {
	out := make([]WireCommand, 0, len(commandList))
	for _, c := range commandList {
		res, ok := commandResults[c.name]
		if !ok {
			return nil, fmt.Errorf("jsonrpc: command %s has no result type in commandResults (wire.go)", c.name)
		}
		out = append(out, WireCommand{Name: c.name, Args: c.run.arg, Result: res})
	}
	return out, nil
}

// WireList is a list of words the clients offer as they are (the
// choices of a picker, a command's completion), declared once here and
// generated into their wire files.
type WireList struct {
	Name, Doc string
	Values    []string
}

// WireLists are the word lists of the generated references.
func WireLists() []WireList {
	return []WireList{
		{Name: "efforts", Doc: "The reasoning efforts loom.setEffort takes (config.ReasoningEfforts); \"default\" goes back to [model] reasoning_effort.",
			Values: config.ReasoningEfforts},
	}
}

// WireMessage is one message the server sends to a client.
type WireMessage struct {
	Method string
	// Params is the type of its params.
	Params reflect.Type
	// Result, for a request, is the type of the client's answer; nil for
	// a notification.
	Result reflect.Type
	// Standard marks an LSP method whose params carry loom's members for
	// clients that declared experimental.loom.
	Standard bool
}

// WireMessages lists what the server sends: its loom/* notifications and
// requests, and the standard messages it extends.
func WireMessages() []WireMessage {
	return []WireMessage{
		{Method: MethodDisplayMessage, Params: reflect.TypeFor[DisplayMessageParams]()},
		{Method: MethodToolCall, Params: reflect.TypeFor[ToolCallParams]()},
		{Method: MethodState, Params: reflect.TypeFor[StateParams]()},
		{Method: MethodTurnEnded, Params: reflect.TypeFor[TurnEndedParams]()},
		{Method: MethodCommit, Params: reflect.TypeFor[CommitParams]()},
		{Method: MethodCommandChanges, Params: reflect.TypeFor[CommandChangesParams]()},
		{Method: MethodNotice, Params: reflect.TypeFor[NoticeParams]()},
		{Method: MethodProposedChanges, Params: reflect.TypeFor[ProposedChangesParams]()},
		{Method: MethodRewound, Params: reflect.TypeFor[RewoundParams]()},
		{Method: MethodHook, Params: reflect.TypeFor[HookParams]()},
		{Method: MethodMode, Params: reflect.TypeFor[ModeParams]()},
		{Method: MethodPlan, Params: reflect.TypeFor[PlanParams]()},
		{Method: MethodPlanProposal, Params: reflect.TypeFor[PlanProposalParams]()},
		{Method: MethodSubagent, Params: reflect.TypeFor[SubagentParams]()},
		{Method: MethodSaveDocuments, Params: reflect.TypeFor[SaveDocumentsParams](), Result: reflect.TypeFor[SaveDocumentsResult]()},
		{Method: MethodElicit, Params: reflect.TypeFor[ElicitParams](), Result: reflect.TypeFor[ElicitResult]()},
		{Method: MethodDiagnostics, Params: reflect.TypeFor[DiagnosticsParams](), Result: reflect.TypeFor[DiagnosticsResult]()},
		{Method: protocol.MethodWindowShowMessage, Params: reflect.TypeFor[ShowMessageParams](), Standard: true},
		{Method: protocol.MethodWindowShowMessageRequest, Params: reflect.TypeFor[ApprovalRequestParams](), Result: reflect.TypeFor[ApprovalAction](), Standard: true},
	}
}
