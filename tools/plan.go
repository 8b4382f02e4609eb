package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"

	"github.com/loom-lsp/loom-lsp/fsm"
)

//go:embed update_plan.md
var updatePlanDescription string

//go:embed propose_plan.md
var proposePlanDescription string

// ErrRunsInMachine is returned by the Run of a tool the state machine
// runs itself (update_plan, propose_plan): the workspace never runs them.
var ErrRunsInMachine = errors.New("this tool runs in the state machine, not in the workspace")

// UpdatePlan is the update_plan tool: the conversation's todo list. The
// machine runs it (fsm.UpdatePlanTool); this is its schema and
// description.
type UpdatePlan struct{}

// Name implements Tool.
func (UpdatePlan) Name() string { return fsm.UpdatePlanTool }

// Description implements Tool.
func (UpdatePlan) Description() string { return updatePlanDescription }

// Mutating implements Tool: the list is conversation state, not the
// workspace's.
func (UpdatePlan) Mutating() bool { return false }

// Schema implements Tool.
func (UpdatePlan) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"plan":{"type":"array","items":{"type":"object","properties":{` +
		`"step":{"type":"string"},` +
		`"status":{"type":"string","enum":["pending","in_progress","completed"]}},` +
		`"required":["step","status"]}}},` +
		`"required":["plan"]}`)
}

// Run implements Tool; it is never called.
func (UpdatePlan) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{}, ErrRunsInMachine
}

// ProposePlan is the propose_plan tool: the plan the user approves in
// plan mode. The machine runs it (fsm.ProposePlanTool).
type ProposePlan struct{}

// Name implements Tool.
func (ProposePlan) Name() string { return fsm.ProposePlanTool }

// Description implements Tool.
func (ProposePlan) Description() string { return proposePlanDescription }

// Mutating implements Tool: proposing changes nothing.
func (ProposePlan) Mutating() bool { return false }

// Schema implements Tool.
func (ProposePlan) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string"}},"required":["plan"]}`)
}

// Run implements Tool; it is never called.
func (ProposePlan) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{}, ErrRunsInMachine
}
