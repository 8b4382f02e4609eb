package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Modes, the todo list and plan approval over LSP.
const (
	// CmdSetMode switches the conversation's mode (agent, plan or ask):
	// ModeArgs -> ModeResult.
	CmdSetMode = "loom.setMode"
	// CmdDecidePlan answers the plan waiting for approval: DecidePlanArgs
	// -> null.
	CmdDecidePlan = "loom.decidePlan"

	// MethodMode carries ModeParams: the conversation's mode changed.
	MethodMode = "loom/mode"
	// MethodPlan carries PlanParams: the todo list, whole.
	MethodPlan = "loom/plan"
	// MethodPlanProposal carries PlanProposalParams: a plan waits for
	// loom.decidePlan.
	MethodPlanProposal = "loom/planProposal"
)

// ModeArgs select a conversation and, for loom.setMode, the mode.
type ModeArgs struct {
	URI          string `json:"uri,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Mode         string `json:"mode"`
}

// ModeResult is loom.setMode's reply: the mode and the todo list now.
type ModeResult struct {
	Folder string         `json:"folder"`
	Mode   fsm.Mode       `json:"mode"`
	Plan   []fsm.PlanItem `json:"plan"`
}

// DecidePlanArgs answer the plan waiting for approval: accept (with
// fresh, in a new conversation whose first prompt is the plan; with plan,
// the user's edited version) or reject (with comment, the model revises
// it at once; without, the turn ends).
type DecidePlanArgs struct {
	URI          string `json:"uri,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	workspace.PlanDecision
}

// ModeParams is a conversation's new mode.
type ModeParams struct {
	Folder       string   `json:"folder"`
	Conversation string   `json:"conversation,omitempty"`
	Mode         fsm.Mode `json:"mode"`
}

// PlanParams is the todo list, whole (items empty: no list).
type PlanParams struct {
	Folder       string         `json:"folder"`
	Conversation string         `json:"conversation,omitempty"`
	Turn         uint64         `json:"turn"`
	Items        []fsm.PlanItem `json:"items"`
}

// PlanProposalParams is a plan waiting for loom.decidePlan.
type PlanProposalParams struct {
	Folder       string `json:"folder"`
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	CallID       string `json:"callId"`
	Plan         string `json:"plan"`
}

func (h commandHandler) runSetMode(ctx context.Context, a ModeArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdSetMode, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	if !fsm.Mode(a.Mode).Valid() {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: mode is agent, plan or ask, not %q", CmdSetMode, a.Mode)
	}
	if err := sess.Controls().SetMode(ctx, fsm.Mode(a.Mode)); err != nil {
		return nil, err
	}
	mode, plan, err := sess.Controls().Mode(ctx)
	if err != nil {
		return nil, err
	}
	return &ModeResult{Folder: sess.Folder().Path(), Mode: mode, Plan: plan}, nil
}

func (h commandHandler) runDecidePlan(ctx context.Context, a DecidePlanArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdDecidePlan, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	err = sess.Controls().DecidePlan(ctx, a.PlanDecision)
	if errors.Is(err, workspace.ErrNoPlan) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdDecidePlan, err)
	}
	return nil, err
}

// The answers a generic client is offered for a proposed plan.
const (
	planBuild      = "Build it"
	planBuildFresh = "Build it in a new conversation"
	planKeep       = "Keep planning"
)

// ModeChanged sends the conversation's new mode: loom/mode, or a log
// line to a client without experimental.loom.
func (f *folderOut) ModeChanged(n workspace.ModeChanged) {
	if f.caps().loom {
		f.s.notify(context.Background(), MethodMode, &ModeParams{Folder: f.folder, Conversation: f.conversation, Mode: n.Mode})
	} else {
		f.log(f.label() + ": mode " + string(n.Mode))
	}
}

// PlanChanged sends the todo list: loom/plan, or a log line to a client
// without experimental.loom.
func (f *folderOut) PlanChanged(n workspace.PlanChanged) {
	if f.caps().loom {
		items := append([]fsm.PlanItem{}, n.Plan...)
		f.s.notify(context.Background(), MethodPlan, &PlanParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Items: items})
	} else {
		f.log(f.label() + ": plan " + workspace.PlanLine(n.Plan))
	}
}

// PlanProposed sends a plan for approval: loom/planProposal, or a
// question to a client without experimental.loom.
func (f *folderOut) PlanProposed(n workspace.PlanProposed) {
	if f.caps().loom {
		f.s.notify(context.Background(), MethodPlanProposal, &PlanProposalParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, CallID: n.CallID, Plan: n.Plan})
		return
	}
	folder, conv, plan := f.folder, f.conversation, n.Plan
	f.s.goBackground(func() { f.s.askPlan(folder, conv, plan) })
}

// TitleChanged sends nothing: clients read titles in loom.conversations.
func (f *folderOut) TitleChanged(workspace.TitleChanged) {}

// log sends a line to window/logMessage.
func (f *folderOut) log(line string) {
	f.s.notify(context.Background(), protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: protocol.MessageTypeLog, Message: line})
}

// askPlan asks a generic client to approve a plan
// (window/showMessageRequest). A client that cannot answer leaves the
// plan rejected without a comment: the turn ends, the plan shown.
func (s *Server) askPlan(folder, conv, plan string) {
	ctx := s.ctx
	f, err := s.host.Folder(folder)
	if err != nil {
		return
	}
	sess, err := f.Conversation(conv)
	if err != nil {
		return
	}
	var item *protocol.MessageActionItem
	err = s.askClient(ctx, "Loom proposes a plan", &protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeInfo, Message: "Loom proposes a plan:\n\n" + strings.TrimSpace(plan),
		Actions: []protocol.MessageActionItem{{Title: planBuild}, {Title: planBuildFresh}, {Title: planKeep}},
	}, &item)
	d := workspace.PlanDecision{}
	if err == nil && item != nil {
		d.Accept = item.Title == planBuild || item.Title == planBuildFresh
		d.Fresh = item.Title == planBuildFresh
	}
	if err := sess.Controls().DecidePlan(ctx, d); err != nil && !errors.Is(err, workspace.ErrNoPlan) {
		s.log.Info("deciding a plan", "err", err)
	}
}

// readImages reads loom.ask's pictures: paths absolute or relative to
// folder, at most workspace.MaxImageBytes each (checked again when
// stored).
func readImages(folder string, paths []string) ([]workspace.ImageInput, error) {
	var out []workspace.ImageInput
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(folder, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		if st.Size() > workspace.MaxImageBytes {
			return nil, fmt.Errorf("%w: %s is %.1f MB, over the %d MB limit: downscale it first", workspace.ErrImage, p, float64(st.Size())/(1<<20), workspace.MaxImageBytes>>20)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		out = append(out, workspace.ImageInput{Name: p, Data: b})
	}
	return out, nil
}
