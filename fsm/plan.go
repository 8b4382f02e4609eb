package fsm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Two tools run inside the machine, when Config.Tools declares them:
//
//   - update_plan keeps the conversation's todo list: the call's items
//     replace the list, and PlanUpdated shows it. It is conversation
//     state: the journal replays it (it is in the LlmCompleted that made
//     the call), a compaction's summary carries it, and a conversation
//     rewind takes it back to what it was when the turn started.
//   - propose_plan ends planning: in a read-only mode the call waits for
//     the user (ProposePlan), who accepts the plan (the mode becomes
//     agent and the model carries it out, or a new conversation starts
//     with the plan as its prompt), edits it, or rejects it with a
//     comment the model reads (PlanDecided).

// The names of the tools the machine runs itself.
const (
	UpdatePlanTool  = "update_plan"
	ProposePlanTool = "propose_plan"
)

// PlanStatus is the state of one todo item.
type PlanStatus string

// The states of a todo item.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanCompleted  PlanStatus = "completed"
)

// PlanItem is one item of the todo list.
type PlanItem struct {
	Step   string     `json:"step"`
	Status PlanStatus `json:"status"`
}

// PlanUpdated tells the caller to show the todo list as Items (empty:
// no list).
type PlanUpdated struct {
	Turn  uint64
	Items []PlanItem
}

// ProposePlan asks the caller to show Plan, proposed by call CallID, to
// the user and to step PlanDecided with the answer.
type ProposePlan struct {
	Turn   uint64
	CallID string
	Plan   string
}

// PlanDecision is the user's answer to a proposed plan.
type PlanDecision string

// The answers to a proposed plan.
const (
	PlanAccept PlanDecision = "accept"
	PlanReject PlanDecision = "reject"
)

// PlanDecided is the user's answer to the plan of call CallID of turn
// Turn. Accept switches to agent mode; Plan, when set, is the plan as the
// user edited it; Fresh ends the turn and asks for a new conversation
// whose first prompt is the plan (FreshConversation). Reject keeps the
// mode: with a Comment the model reads it and goes on, without one the
// turn ends so that the user can say why.
type PlanDecided struct {
	Turn     uint64
	CallID   string
	Decision PlanDecision
	Plan     string `json:",omitempty"`
	Comment  string `json:",omitempty"`
	Fresh    bool   `json:",omitempty"`
}

// FreshConversation asks the caller to start a new conversation (Reset)
// whose first prompt is Prompt: an accepted plan, to carry out with a
// clean context.
type FreshConversation struct {
	Prompt string
}

func (PlanDecided) isEvent()        {}
func (PlanUpdated) isAction()       {}
func (ProposePlan) isAction()       {}
func (FreshConversation) isAction() {}

// Describe implements [Event].
func (e PlanDecided) Describe() string {
	s := fmt.Sprintf("PlanDecided turn=%d call=%s %s", e.Turn, e.CallID, e.Decision)
	if e.Fresh {
		s += " fresh"
	}
	if e.Plan != "" {
		s += " plan=" + quote(e.Plan)
	}
	if e.Comment != "" {
		s += " comment=" + quote(e.Comment)
	}
	return s
}

// Describe implements [Action].
func (a PlanUpdated) Describe() string {
	return fmt.Sprintf("PlanUpdated turn=%d %s", a.Turn, DescribePlan(a.Items, "; "))
}

// Describe implements [Action].
func (a ProposePlan) Describe() string {
	return fmt.Sprintf("ProposePlan turn=%d call=%s %s", a.Turn, a.CallID, quote(a.Plan))
}

// Describe implements [Action].
func (a FreshConversation) Describe() string { return "FreshConversation " + quote(a.Prompt) }

// DescribePlan writes items as "[x] done", "[>] doing", "[ ] to do",
// joined by sep; "(empty)" for none.
func DescribePlan(items []PlanItem, sep string) string {
	if len(items) == 0 {
		return "(empty)"
	}
	parts := make([]string, len(items))
	for i, it := range items {
		mark := "[ ]"
		switch it.Status {
		case PlanCompleted:
			mark = "[x]"
		case PlanInProgress:
			mark = "[>]"
		}
		parts[i] = mark + " " + it.Step
	}
	return strings.Join(parts, sep)
}

// Plan returns the todo list. Do not modify it.
func (m *Machine) Plan() []PlanItem { return m.plan[:len(m.plan):len(m.plan)] }

// PendingPlan returns the call id and text of the plan waiting for the
// user's decision, if any.
func (m *Machine) PendingPlan() (callID, plan string, ok bool) {
	if m.planCall == "" {
		return "", "", false
	}
	return m.planCall, m.planText, true
}

// runInternal runs call c of the batch if the machine runs it itself,
// returning its actions; handled is false for a tool the caller runs.
func (m *Machine) runInternal(x *ToolExecution) (acts []Action, handled bool) {
	switch x.Call.Name {
	case UpdatePlanTool:
		items, problem := parsePlanUpdate(x.Call.Arguments)
		x.Status, x.IsError = ExecCompleted, problem != ""
		if problem != "" {
			x.Result = problem
			return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolFailed, Detail: problem}}, true
		}
		m.plan = items
		x.Result = "plan updated"
		return []Action{
			PlanUpdated{Turn: m.turn, Items: m.Plan()},
			DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolSucceeded, Detail: planSummary(items)},
		}, true
	case ProposePlanTool:
		var args struct {
			Plan string `json:"plan"`
		}
		_ = json.Unmarshal([]byte(x.Call.Arguments), &args)
		plan := strings.TrimSpace(args.Plan)
		switch {
		case plan == "":
			x.Status, x.IsError = ExecCompleted, true
			x.Result = "tool error: propose_plan needs {\"plan\": \"…\"}: the plan to propose, in Markdown"
		case !m.Mode().ReadOnly() || m.planCall != "":
			x.Status = ExecCompleted
			x.Result = "you are in agent mode already: no approval is needed, carry out the plan"
			if m.planCall != "" {
				x.IsError = true
				x.Result = "tool error: one plan at a time: another plan of this batch waits for the user"
			}
		default:
			x.Status = ExecReviewing
			m.running++
			m.planCall, m.planText = x.Call.ID, plan
			return []Action{
				DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolPending},
				ProposePlan{Turn: m.turn, CallID: x.Call.ID, Plan: plan},
			}, true
		}
		status := ToolSucceeded
		if x.IsError {
			status = ToolFailed
		}
		return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: status, Detail: firstLine(x.Result)}}, true
	}
	return nil, false
}

// parsePlanUpdate reads update_plan's arguments: {"plan": [{"step",
// "status"}], "explanation"?}. problem is a tool error the model reads.
func parsePlanUpdate(arguments string) (items []PlanItem, problem string) {
	var args struct {
		Plan []PlanItem `json:"plan"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return nil, fmt.Sprintf("tool error: update_plan: %v; send {\"plan\": [{\"step\": \"…\", \"status\": \"pending\"}]}", err)
	}
	inProgress := 0
	for i, it := range args.Plan {
		if strings.TrimSpace(it.Step) == "" {
			return nil, fmt.Sprintf("tool error: update_plan: item %d has no step", i+1)
		}
		switch it.Status {
		case PlanPending, PlanCompleted:
		case PlanInProgress:
			inProgress++
		default:
			return nil, fmt.Sprintf("tool error: update_plan: item %d: status %q is not pending, in_progress or completed", i+1, it.Status)
		}
	}
	if inProgress > 1 {
		return nil, "tool error: update_plan: at most one item may be in_progress"
	}
	return slices.Clone(args.Plan), ""
}

func planSummary(items []PlanItem) string {
	done := 0
	for _, it := range items {
		if it.Status == PlanCompleted {
			done++
		}
	}
	return fmt.Sprintf("%d of %d done", done, len(items))
}

// checkPlanDecided validates a PlanDecided.
func (m *Machine) checkPlanDecided(e PlanDecided) error {
	if m.kind != ExecutingTools || e.Turn != m.turn || m.planCall == "" {
		if e.Turn <= m.turn {
			return m.stale(e)
		}
		return m.invalid(e, "unknown turn")
	}
	if e.CallID != m.planCall {
		return m.invalid(e, "no plan of that call waits for the user")
	}
	if e.Decision != PlanAccept && e.Decision != PlanReject {
		return m.invalid(e, `decision must be "accept" or "reject"`)
	}
	return nil
}

// onPlanDecided completes the proposal's call with the user's answer.
func (m *Machine) onPlanDecided(e PlanDecided) []Action {
	plan := m.planText
	m.planCall, m.planText = "", ""
	var acts []Action
	var result string
	isError := false
	switch {
	case e.Decision == PlanAccept && e.Fresh:
		if e.Plan != "" {
			plan = e.Plan
		}
		result = "The user accepted the plan and starts a new conversation to carry it out."
		m.stopTurn = true
		m.fresh = "Carry out this plan:\n\n" + plan
	case e.Decision == PlanAccept:
		m.mode, m.told = ModeAgent, ModeAgent
		acts = append(acts, ModeChanged{Mode: ModeAgent})
		result = "The user accepted the plan. You are now in agent mode: you may edit files and run commands (as the user's settings allow). Carry out the plan."
		if e.Plan != "" && e.Plan != plan {
			result = "The user edited the plan and accepted it. You are now in agent mode: you may edit files and run commands (as the user's settings allow). Carry out this version:\n\n" + e.Plan
		}
	default:
		isError = true
		result = "tool error: the user rejected the plan"
		if c := strings.TrimSpace(e.Comment); c != "" {
			result += ": " + c + "\nStay in " + string(m.Mode()) + " mode; revise the plan and propose it again."
		} else {
			result += ". Wait for the user to say why."
			m.stopTurn = true
		}
	}
	return append(acts, m.onToolCompleted(ToolCompleted{Turn: e.Turn, CallID: e.CallID, Result: result, IsError: isError})...)
}

// stopAfterBatch ends the turn where the next model request would be
// sent, when a plan decision asked for it.
func (m *Machine) stopAfterBatch(acts []Action) ([]Action, bool) {
	if !m.stopTurn {
		return acts, false
	}
	m.stopTurn = false
	fresh := m.fresh
	m.fresh = ""
	acts = m.endTurn(acts, TurnDone)
	if fresh != "" {
		acts = append(acts, FreshConversation{Prompt: fresh})
	}
	return acts, true
}
