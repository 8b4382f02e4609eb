package fsm

import "fmt"

// RetractMessage tells the caller that the assistant text shown for
// request Request (Bytes bytes, all the DisplayMessage actions since it was
// sent) is abandoned: the request failed partway and another request, a
// retry or a resend after compaction, will answer in its place. Front ends
// drop that text from view, so the answer is not shown twice; the
// conversation never held it.
type RetractMessage struct {
	Turn    uint64
	Request uint64
	Bytes   int
}

func (RetractMessage) isAction() {}

// Describe implements [Action].
func (a RetractMessage) Describe() string {
	return fmt.Sprintf("RetractMessage turn=%d req=%d bytes=%d", a.Turn, a.Request, a.Bytes)
}

// retractIfReplaced puts a RetractMessage first in acts when the failed
// request had shown text and the turn goes on with a request that replaces
// it. shown is the text's length, read before the error reset it.
func (m *Machine) retractIfReplaced(acts []Action, request uint64, shown int) []Action {
	if shown == 0 || m.kind == WaitingForUserInput || m.kind == ShuttingDown {
		return acts
	}
	return append([]Action{RetractMessage{Turn: m.turn, Request: request, Bytes: shown}}, acts...)
}
