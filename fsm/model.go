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
	m.forgetCutWindow() // another model, maybe another window
	return []Action{ModelSelected(e)}
}

func (SelectModel) isEvent()    {}
func (ModelSelected) isAction() {}
