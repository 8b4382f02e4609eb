package fsm

import "fmt"

// SelectModel switches the conversation to another model of the same
// server for its next requests: every SendLlmRequest after it carries
// Model. "" goes back to the configured model. It is valid in every state
// (a request in flight keeps the model it was sent with) and holds until
// the conversation is reset; the journal replays it, so a resumed
// conversation keeps its model.
type SelectModel struct {
	Model string
}

// Describe implements [Event].
func (e SelectModel) Describe() string {
	return fmt.Sprintf("SelectModel model=%q", e.Model)
}

// ModelSelected tells the caller that the conversation's model changed
// (for a status line); Model is "" for the configured one.
type ModelSelected struct {
	Model string
}

// Describe implements [Action].
func (a ModelSelected) Describe() string {
	return fmt.Sprintf("ModelSelected model=%q", a.Model)
}

// Model is the model the conversation selected, "" for the configured
// one.
func (m *Machine) Model() string { return m.model }

func (m *Machine) onSelectModel(e SelectModel) []Action {
	if e.Model == m.model {
		return nil
	}
	m.model = e.Model
	m.cut.forget() // another model, maybe another window
	return []Action{ModelSelected(e)}
}

func (SelectModel) isEvent()    {}
func (ModelSelected) isAction() {}

// SelectEffort sets the conversation's reasoning effort for its next
// requests, overriding the configured one ([model] reasoning_effort):
// every SendLlmRequest after it carries Effort. "" goes back to the
// configured effort. Like SelectModel it is valid in every state, holds
// until the conversation is reset, and the journal replays it. The
// caller checks the value (the machine passes it on as it is).
type SelectEffort struct {
	Effort string
}

// Describe implements [Event].
func (e SelectEffort) Describe() string {
	return fmt.Sprintf("SelectEffort effort=%q", e.Effort)
}

// EffortSelected tells the caller that the conversation's reasoning
// effort changed; Effort is "" for the configured one.
type EffortSelected struct {
	Effort string
}

// Describe implements [Action].
func (a EffortSelected) Describe() string {
	return fmt.Sprintf("EffortSelected effort=%q", a.Effort)
}

// Effort is the reasoning effort the conversation selected, "" for the
// configured one.
func (m *Machine) Effort() string { return m.effort }

func (m *Machine) onSelectEffort(e SelectEffort) []Action {
	if e.Effort == m.effort {
		return nil
	}
	m.effort = e.Effort
	return []Action{EffortSelected(e)}
}

func (SelectEffort) isEvent()    {}
func (EffortSelected) isAction() {}
