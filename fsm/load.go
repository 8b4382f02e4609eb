package fsm

import "fmt"

// Load leaves the conversation for a saved one, ID: queued input is
// dropped first, so that none of it starts, then the turn in flight is
// cancelled (as by Cancel), and the machine emits LoadConversation. The
// caller then swaps in the saved conversation's machine (replaying its
// journal), which goes on after the ids this one used. The conversation
// left stays as it was, its turn closed. Valid in every state but
// ShuttingDown.
type Load struct {
	ID string
}

// LoadConversation tells the caller to swap in the saved conversation ID:
// nothing of this machine is in flight any more. IDs are the last turn
// and request ids used; the loaded conversation goes on after them (see
// AdvanceIDs).
type LoadConversation struct {
	ID  string
	IDs IDs
}

func (Load) isEvent()              {}
func (LoadConversation) isAction() {}

// Describe implements [Event].
func (e Load) Describe() string { return "Load " + e.ID }

// Describe implements [Action].
func (a LoadConversation) Describe() string {
	return fmt.Sprintf("LoadConversation %s after turn=%d req=%d", a.ID, a.IDs.Turn, a.IDs.Request)
}

// onLoad: any state -> WaitingForUserInput, the queue dropped before the
// turn is closed.
func (m *Machine) onLoad(e Load) []Action {
	m.dropQueue()
	var acts []Action
	if m.busy() {
		acts = m.endTurn(m.abandonTurn(), TurnCancelled)
	}
	return append(acts, LoadConversation{ID: e.ID, IDs: m.IDs()})
}
