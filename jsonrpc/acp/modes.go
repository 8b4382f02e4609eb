package acp

import (
	"context"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Modes, the todo list and plan approval in ACP. A session's mode (ask,
// plan, agent: fsm.Mode, journaled) is offered both ways the schema has:
// the session's modes (SessionModeState, session/set_mode,
// current_mode_update) and the config option "mode" (category "mode",
// session/set_config_option, config_option_update), beside "model". The
// todo list (update_plan) goes out as plan updates. A plan proposed in
// plan mode is a session/request_permission on its propose_plan call:
// build it here, build it in a new session (a fresh conversation whose
// first prompt is the plan), or keep planning (the turn ends; the next
// prompt says what to change).

// modeConfigID is the id of the mode's session config option.
const modeConfigID = "mode"

// The permission options of a proposed plan.
const (
	optionPlanAccept = "plan-accept"
	optionPlanFresh  = "plan-accept-fresh"
	optionPlanReject = "plan-reject"
)

// modeNames are the modes' names for people.
var modeNames = map[fsm.Mode]string{fsm.ModeAsk: "Ask", fsm.ModePlan: "Plan", fsm.ModeAgent: "Agent"}

// modeState is the session's modes, current mode first known.
func modeState(current fsm.Mode) *acpsdk.SessionModeState {
	st := &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(current)}
	for _, m := range fsm.Modes {
		st.AvailableModes = append(st.AvailableModes, acpsdk.SessionMode{Id: acpsdk.SessionModeId(m), Name: modeNames[m], Description: acpsdk.Ptr(m.Description())})
	}
	return st
}

// modeOption is the session config option "mode".
func modeOption(current fsm.Mode) acpsdk.SessionConfigOption {
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{}
	for _, m := range fsm.Modes {
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(m), Name: modeNames[m], Description: acpsdk.Ptr(m.Description())})
	}
	category := acpsdk.SessionConfigOptionCategoryMode
	return acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Type: "select", Id: modeConfigID, Name: "Mode", Category: &category,
		Description:  acpsdk.Ptr("what the agent may do: ask and plan are read-only"),
		CurrentValue: acpsdk.SessionConfigValueId(current),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
}

// sessionState is what session/new, load and resume answer besides the
// id: the models, the modes and the config options of both.
type sessionState struct {
	sessionModels
	modes *acpsdk.SessionModeState
}

// stateOf gathers conversation c's models and mode, for session id
// (opening: see modelsOf).
func (a *agent) stateOf(ctx context.Context, id acpsdk.SessionId, c *workspace.Conversation, opening bool) (sessionState, error) {
	m, err := a.modelsOf(ctx, id, c, opening)
	if err != nil {
		return sessionState{}, err
	}
	a.rememberModels(id, m.options)
	mode, _, err := c.Controls().Mode(ctx)
	if err != nil {
		return sessionState{}, err
	}
	effort, err := effortOptionOf(ctx, c)
	if err != nil {
		return sessionState{}, err
	}
	m.options = append(m.options, modeOption(mode), effort)
	return sessionState{sessionModels: m, modes: modeState(mode)}, nil
}

// SetSessionMode implements acpsdk.Agent: session/set_mode switches the
// session's mode; the client hears current_mode_update.
func (a *agent) SetSessionMode(ctx context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, a.setMode(ctx, p.SessionId, string(p.ModeId))
}

// setMode switches session id's mode.
func (a *agent) setMode(ctx context.Context, id acpsdk.SessionId, mode string) error {
	s, err := a.liveSession(id)
	if err != nil {
		return err
	}
	if !fsm.Mode(mode).Valid() {
		return invalidParams("unknown mode %q: the modes are ask, plan and agent", mode)
	}
	if err := s.ws.Controls().SetMode(ctx, fsm.Mode(mode)); err != nil {
		return err
	}
	a.log.Info("mode switched", "session", s.id, "mode", mode)
	return nil
}

// modeChanged tells the client the session's new mode, both ways. It runs
// on the conversation's goroutine: the model's option is the one last
// given to the client.
func (o sessionOut) modeChanged(mode fsm.Mode) {
	a, s := o.a, o.s
	a.updates.send(s.id, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{
		SessionUpdate: "current_mode_update", CurrentModeId: acpsdk.SessionModeId(mode),
	}})
	a.mu.Lock()
	opts := append(append([]acpsdk.SessionConfigOption(nil), s.modelOptions...), modeOption(mode))
	a.mu.Unlock()
	a.updates.send(s.id, acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{
		SessionUpdate: "config_option_update", ConfigOptions: opts,
	}})
}

// rememberModels records the model options last given for session id.
func (a *agent) rememberModels(id acpsdk.SessionId, opts []acpsdk.SessionConfigOption) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		s.modelOptions = opts
	}
}

// planUpdate is the todo list as an ACP plan update.
func planUpdate(items []fsm.PlanItem) acpsdk.SessionUpdate {
	entries := make([]acpsdk.PlanEntry, 0, len(items))
	for _, it := range items {
		entries = append(entries, acpsdk.PlanEntry{Content: it.Step, Priority: acpsdk.PlanEntryPriorityMedium, Status: acpsdk.PlanEntryStatus(it.Status)})
	}
	return acpsdk.UpdatePlan(entries...)
}

// decidePlan asks the client to approve a proposed plan, then tells the
// session. It runs on a goroutine of its own.
func (o sessionOut) decidePlan(callID, plan string) {
	a, s := o.a, o.s
	ctx := context.Background()
	if err := a.out.flush(ctx); err != nil {
		return
	}
	resp, err := a.requestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: s.id,
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(callID),
			Title:      acpsdk.Ptr("Ready to build? " + firstLine(strings.TrimSpace(plan))),
			Kind:       acpsdk.Ptr(acpsdk.ToolKindSwitchMode),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(plan))},
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optionPlanAccept, Name: "Yes, build it (agent mode)", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optionPlanFresh, Name: "Yes, in a new conversation with the plan", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optionPlanReject, Name: "No, keep planning (say why next)", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	d := workspace.PlanDecision{}
	if err == nil && resp.Outcome.Selected != nil {
		switch resp.Outcome.Selected.OptionId {
		case optionPlanAccept:
			d.Accept = true
		case optionPlanFresh:
			d.Accept, d.Fresh = true, true
		}
	}
	o.proposalDecided(callID, d.Accept, d.Fresh)
	if err := s.ws.Controls().DecidePlan(ctx, d); err != nil {
		a.log.Debug("plan decision", "call", callID, "err", err)
	}
}

// usageUpdate is how full the context is, for the client's meter.
func usageUpdate(c *workspace.ContextUse) acpsdk.SessionUpdate {
	return acpsdk.SessionUpdate{UsageUpdate: &acpsdk.SessionUsageUpdate{
		SessionUpdate: "usage_update", Used: int(c.Tokens), Size: c.Window,
	}}
}

// titleUpdate is the session's title (session_info_update).
func titleUpdate(title string) acpsdk.SessionUpdate {
	return acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{
		SessionUpdate: "session_info_update", Title: acpsdk.Ptr(title),
	}}
}
