package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Modes and the todo list. Both are the machine's (fsm.SetMode,
// update_plan, propose_plan): the conversation switches the mode, shows
// the list and the proposed plan, and steps the user's decision on it.

// The notifications of modes and plans.
const (
	// NoteMode: Text is the conversation's new mode (fsm.Mode).
	NoteMode NotificationKind = "mode"
	// NotePlan: Plan is the todo list as it is now (empty: none).
	NotePlan NotificationKind = "plan"
	// NotePlanProposal: Text is a plan the model proposes, waiting for
	// the user's decision (Conversation.DecidePlan); Tool.CallID names
	// the call.
	NotePlanProposal NotificationKind = "plan_proposal"
	// NoteTitle: Text is the conversation's title (its first prompt's
	// first line, or the one a rename set).
	NoteTitle NotificationKind = "title"
)

// ContextUse is how full the model's context window is: Tokens estimates
// what the next request sends, Window is the window (0: unknown).
type ContextUse struct {
	Tokens int64
	Window int
}

// contextUse measures the context of m, run with st, now; on the
// conversation's goroutine.
func contextUse(m *fsm.Machine, st *settings) *ContextUse {
	w, _ := st.contextWindow()
	return &ContextUse{Tokens: m.Tokens(), Window: w}
}

// ErrNoPlan is wrapped by DecidePlan's error when no plan waits for the
// user.
var ErrNoPlan = errors.New("no plan waits for a decision")

// PlanDecision is the user's answer to a proposed plan.
type PlanDecision struct {
	// Accept takes the plan (the conversation switches to agent mode and
	// the model carries it out); false rejects it.
	Accept bool `json:"accept"`
	// Fresh, with Accept, starts a new conversation whose first prompt is
	// the plan, instead of going on in this one.
	Fresh bool `json:"fresh,omitempty"`
	// Plan, with Accept, is the plan as the user edited it.
	Plan string `json:"plan,omitempty"`
	// Comment, with a rejection, tells the model why; without one the
	// turn ends so that the user says it in the next prompt.
	Comment string `json:"comment,omitempty"`
}

// SetMode switches the conversation's mode (fsm.SetMode): "agent",
// "plan" or "ask".
func (c Controls) SetMode(ctx context.Context, mode fsm.Mode) error {
	if !mode.Valid() {
		return fmt.Errorf("unknown mode %q: use agent, plan or ask", mode)
	}
	var stepErr error
	err := c.do(ctx, func() { stepErr = c.step(fsm.SetMode{Mode: mode}) })
	if err != nil {
		return err
	}
	return stepErr
}

// Mode returns the conversation's mode and its todo list.
func (c Controls) Mode(ctx context.Context) (fsm.Mode, []fsm.PlanItem, error) {
	var mode fsm.Mode
	var plan []fsm.PlanItem
	err := c.do(ctx, func() {
		mode = c.m().Mode()
		plan = append([]fsm.PlanItem{}, c.m().Plan()...)
	})
	return mode, plan, err
}

// PendingPlan returns the plan waiting for the user's decision, if any.
func (c Controls) PendingPlan(ctx context.Context) (callID, plan string, ok bool, err error) {
	err = c.do(ctx, func() { callID, plan, ok = c.m().PendingPlan() })
	return
}

// DecidePlan answers the plan waiting for the user (fsm.PlanDecided).
func (c Controls) DecidePlan(ctx context.Context, d PlanDecision) error {
	var stepErr error
	err := c.do(ctx, func() {
		callID, _, ok := c.m().PendingPlan()
		if !ok {
			stepErr = ErrNoPlan
			return
		}
		ev := fsm.PlanDecided{Turn: c.m().State().Turn, CallID: callID, Decision: fsm.PlanReject, Comment: d.Comment}
		if d.Accept {
			ev = fsm.PlanDecided{Turn: ev.Turn, CallID: callID, Decision: fsm.PlanAccept, Fresh: d.Fresh, Plan: d.Plan}
		}
		stepErr = c.step(ev)
	})
	if err != nil {
		return err
	}
	return stepErr
}

// performPlan carries out the machine's actions of modes and plans; it
// reports whether a was one of them.
func (s *Conversation) performPlan(a fsm.Action) bool {
	switch a := a.(type) {
	case fsm.ModeChanged:
		s.out.notify(Notification{Kind: NoteMode, Turn: s.m.State().Turn, Text: string(a.Mode)})
	case fsm.PlanUpdated:
		s.out.notify(Notification{Kind: NotePlan, Turn: a.Turn, Plan: append([]fsm.PlanItem{}, a.Items...)})
	case fsm.ProposePlan:
		s.out.notify(Notification{Kind: NotePlanProposal, Turn: a.Turn, Text: a.Plan, Tool: &ToolNote{CallID: a.CallID, Name: fsm.ProposePlanTool}})
	case fsm.FreshConversation:
		// After this step: a new conversation whose first prompt is the
		// accepted plan.
		s.loop.post(func() {
			if _, err := s.step(fsm.Reset{}); err != nil {
				return
			}
			s.out.notify(Notification{Kind: NoteInfo, Text: "started a new conversation with the accepted plan"})
			s.step(fsm.UserInput{Text: a.Prompt})
		})
	default:
		return false
	}
	return true
}

// announcePlan tells the editor (notify) the title, the mode and the
// todo list of a resumed conversation (m, titled title), when they are
// not the defaults.
func announcePlan(m *fsm.Machine, title string, notify func(Notification)) {
	turn := m.State().Turn
	if title != "" {
		notify(Notification{Kind: NoteTitle, Turn: turn, Text: title})
	}
	if mode := m.Mode(); mode != fsm.ModeAgent {
		notify(Notification{Kind: NoteMode, Turn: turn, Text: string(mode)})
	}
	if plan := m.Plan(); len(plan) > 0 {
		notify(Notification{Kind: NotePlan, Turn: turn, Plan: append([]fsm.PlanItem{}, plan...)})
	}
}
