package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Plan operations (the ACP schema's plan_update and plan_removed, RFD
// "Plan Operations Support", stable since 2026-11-20), for a client that
// declares clientCapabilities.plan. A session has up to two plans, each
// replaced by its id as it changes:
//
//   - the todo list (update_plan) as a checklist: plan_update of type
//     "items", planId "todo"; an emptied list is plan_removed;
//   - a plan proposed in plan mode (propose_plan) as a Markdown plan
//     document: plan_update of type "markdown", planId "plan-<call id>",
//     beside the permission request that asks whether to build it. It
//     is plan_removed when the user rejects it (or the request is
//     cancelled), when it is taken to a new conversation, and, accepted
//     here, when the turn that builds it ends (done).
//
// A client that does not declare the capability gets the todo list as
// the legacy plan update, and the proposed plan in the permission
// request only (modes.go). The SDK (v0.13.0) lacks these updates: they
// go out through the outbox as raw updates (outbox.raw).

// todoPlanID is the planId of the todo list.
const todoPlanID = "todo"

// planItemsUpdate is plan_update with an item-based plan (schema
// PlanUpdate, PlanUpdateContent "items", PlanItems).
type planItemsUpdate struct {
	SessionUpdate string    `json:"sessionUpdate"` // "plan_update"
	Plan          planItems `json:"plan"`
}

type planItems struct {
	Type    string             `json:"type"` // "items"
	PlanID  string             `json:"planId"`
	Entries []acpsdk.PlanEntry `json:"entries"`
}

// planMarkdownUpdate is plan_update with a Markdown plan (PlanMarkdown).
type planMarkdownUpdate struct {
	SessionUpdate string       `json:"sessionUpdate"` // "plan_update"
	Plan          planMarkdown `json:"plan"`
}

type planMarkdown struct {
	Type    string `json:"type"` // "markdown"
	PlanID  string `json:"planId"`
	Content string `json:"content"`
}

// planRemovedUpdate is plan_removed (PlanRemoved).
type planRemovedUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // "plan_removed"
	PlanID        string `json:"planId"`
}

// planOps reports whether the client declared clientCapabilities.plan.
func (a *agent) planOps() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.planCapable
}

// planEntries are the todo list's entries.
func planEntries(items []fsm.PlanItem) []acpsdk.PlanEntry {
	entries := make([]acpsdk.PlanEntry, 0, len(items))
	for _, it := range items {
		entries = append(entries, acpsdk.PlanEntry{Content: it.Step, Priority: acpsdk.PlanEntryPriorityMedium, Status: acpsdk.PlanEntryStatus(it.Status)})
	}
	return entries
}

// sendTodo shows session s's todo list: a plan_update of the checklist,
// or plan_removed once it is emptied (only if it was shown); the legacy
// plan update to a client without plan operations.
func (o sessionOut) sendTodo(items []fsm.PlanItem) {
	a, s := o.a, o.s
	if !a.planOps() {
		a.updates.send(s.id, planUpdate(items))
		return
	}
	a.mu.Lock()
	shown := s.todoShown
	s.todoShown = len(items) > 0
	a.mu.Unlock()
	if len(items) == 0 {
		if shown {
			a.updates.sendRaw(s.id, planRemovedUpdate{SessionUpdate: "plan_removed", PlanID: todoPlanID})
		}
		return
	}
	a.updates.sendRaw(s.id, planItemsUpdate{SessionUpdate: "plan_update", Plan: planItems{Type: "items", PlanID: todoPlanID, Entries: planEntries(items)}})
}

// proposalPlanID is the planId of the plan proposed by call callID.
func proposalPlanID(callID string) string { return "plan-" + callID }

// showProposal shows a plan proposed in plan mode as a Markdown plan,
// to a client with plan operations.
func (o sessionOut) showProposal(callID, plan string) {
	a, s := o.a, o.s
	if !a.planOps() {
		return
	}
	id := proposalPlanID(callID)
	a.mu.Lock()
	s.proposal, s.proposalBuilding = id, false
	a.mu.Unlock()
	a.updates.sendRaw(s.id, planMarkdownUpdate{SessionUpdate: "plan_update", Plan: planMarkdown{Type: "markdown", PlanID: id, Content: plan}})
}

// proposalDecided removes the proposed plan of call callID when it was
// rejected or taken to a new conversation; an accepted plan stays until
// the turn that builds it ends (proposalDone).
func (o sessionOut) proposalDecided(callID string, accepted, fresh bool) {
	a, s := o.a, o.s
	id := proposalPlanID(callID)
	a.mu.Lock()
	if s.proposal != id {
		a.mu.Unlock()
		return
	}
	if accepted && !fresh {
		s.proposalBuilding = true
		a.mu.Unlock()
		return
	}
	s.proposal = ""
	a.mu.Unlock()
	a.updates.sendRaw(s.id, planRemovedUpdate{SessionUpdate: "plan_removed", PlanID: id})
}

// proposalDone removes an accepted plan once the turn that built it
// ended.
func (o sessionOut) proposalDone() {
	a, s := o.a, o.s
	a.mu.Lock()
	id := s.proposal
	if id == "" || !s.proposalBuilding {
		a.mu.Unlock()
		return
	}
	s.proposal, s.proposalBuilding = "", false
	a.mu.Unlock()
	a.updates.sendRaw(s.id, planRemovedUpdate{SessionUpdate: "plan_removed", PlanID: id})
}
