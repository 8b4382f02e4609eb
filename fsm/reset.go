package fsm

import "fmt"

// Reset empties the conversation: the turn in flight is cancelled (as by
// Cancel), queued input is dropped, files pending a FilesChanged note are
// forgotten, and the history goes back to the system prompt alone. Turn
// and request ids keep increasing across a reset, so that a client keying
// on them never sees one twice, and a late event of the old conversation
// is stale in the new one. Valid in every state but ShuttingDown.
type Reset struct{}

// DropQueued drops the inputs queued behind the turn in flight, which
// goes on. The turn ids of the dropped inputs are not reused. Valid in
// every state but ShuttingDown.
type DropQueued struct{}

// ApprovalDecided is the user's answer to a request to approve tool call
// CallID of turn Turn (a bash command under tools.bash = "ask"). An
// approved call goes on running: its ToolCompleted follows. A denied call
// is completed by the machine itself with a tool error the model reads,
// and the caller must not run it nor send its ToolCompleted.
type ApprovalDecided struct {
	Turn     uint64
	CallID   string
	Approved bool
	// Why, when set, says how the decision was made: the approval rule
	// that allowed the command, or why it was denied without the user
	// (no answer in time, no way to ask). It is shown with the tool call
	// and, for a denial, told to the model.
	Why string
}

// ConversationReset tells the caller that the conversation was emptied by
// Reset: whatever it keeps per conversation (a journal, a transcript)
// starts anew. IDs are the last turn and request ids used; the new
// conversation's ids come after them (see Config.ContinueFrom).
type ConversationReset struct {
	IDs IDs
}

// AdvanceIDs raises the machine's turn and request ids to at least IDs, so
// that a conversation loaded into a session that already used higher ids
// (an older conversation resumed over a newer one) goes on after them: a
// client keying on ids never sees one twice. Ids never go back: lower
// values change nothing. Valid only between turns (WaitingForUserInput).
type AdvanceIDs struct {
	IDs IDs
}

// IDs are a machine's last turn and request ids.
type IDs struct {
	Turn    uint64
	Request uint64
}

func (Reset) isEvent()           {}
func (DropQueued) isEvent()      {}
func (ApprovalDecided) isEvent() {}
func (AdvanceIDs) isEvent()      {}

func (ConversationReset) isAction() {}

// Describe implements [Event].
func (Reset) Describe() string { return "Reset" }

// Describe implements [Event].
func (DropQueued) Describe() string { return "DropQueued" }

// Describe implements [Event].
func (e ApprovalDecided) Describe() string {
	verdict := "denied"
	if e.Approved {
		verdict = "approved"
	}
	if e.Why != "" {
		verdict += fmt.Sprintf(" why=%q", e.Why)
	}
	return fmt.Sprintf("ApprovalDecided turn=%d call=%s %s", e.Turn, e.CallID, verdict)
}

// Describe implements [Event].
func (e AdvanceIDs) Describe() string {
	return fmt.Sprintf("AdvanceIDs turn=%d req=%d", e.IDs.Turn, e.IDs.Request)
}

// Describe implements [Action].
func (a ConversationReset) Describe() string {
	return fmt.Sprintf("ConversationReset after turn=%d req=%d", a.IDs.Turn, a.IDs.Request)
}

// deniedResult is the tool result of a call the user did not approve.
const deniedResult = "tool error: denied by the user; the command was not run"

// IDs returns the last turn and request ids the machine used; the ids
// promised to dropped inputs count as used.
func (m *Machine) IDs() IDs { return IDs{Turn: m.turn + m.dropped, Request: m.request} }

// dropQueue forgets the queued inputs. The turn ids they were promised
// (a client was told which turn each would run as) are used up, never
// given to another input.
func (m *Machine) dropQueue() {
	m.dropped += uint64(len(m.queue) - m.qhead)
	clear(m.queue)
	m.queue, m.qhead = m.queue[:0], 0
	if !m.busy() {
		m.turn += m.dropped
		m.dropped = 0
	}
}

// advanceIDs raises the ids to at least ids; the machine is between
// turns, so no promised id is pending (dropped is zero).
func (m *Machine) advanceIDs(ids IDs) {
	m.turn = max(m.turn, ids.Turn)
	m.request = max(m.request, ids.Request)
}

// NextTurn returns the turn id a UserInput stepped now will run as.
func (m *Machine) NextTurn() uint64 {
	n := m.turn + m.dropped + 1
	if m.busy() {
		n += uint64(len(m.queue) - m.qhead)
	}
	return n
}

// onReset: any state -> WaitingForUserInput with an empty conversation.
// The queue is dropped before the turn is closed, so that no queued input
// starts.
func (m *Machine) onReset() []Action {
	m.dropQueue()
	var acts []Action
	if m.busy() {
		acts = m.endTurn(m.abandonTurn(), TurnCancelled)
	}
	m.history = m.history[:0:0]
	m.model = ""
	m.effort = ""
	if m.cfg.SystemPrompt != "" {
		m.history = append(m.history, Message{Role: RoleSystem, Content: m.cfg.SystemPrompt})
	}
	m.changed.take()
	m.notes, m.checkpoints, m.redo = nil, nil, nil
	m.turnStart, m.turnStarts = 0, nil
	m.elided.forget()
	m.prompt, m.sentMsgs = promptCount{}, 0
	m.compaction, m.compactMsgs, m.ctxRetried, m.emptyRetried = nil, nil, false, false
	m.turnUsage, m.totalUsage = Usage{}, Usage{}
	m.cut.forget()
	acts = append(acts, ConversationReset{IDs: m.IDs()})
	if len(m.plan) > 0 {
		acts = append(acts, PlanUpdated{Turn: m.turn})
	}
	m.plan = nil
	if m.Mode() != ModeAgent {
		acts = append(acts, ModeChanged{Mode: ModeAgent})
	}
	m.mode, m.told = "", ""
	return acts
}

// onApprovalDecided records the user's answer: an approved call is
// running; a denied one is completed with deniedResult.
func (m *Machine) onApprovalDecided(e ApprovalDecided) []Action {
	x := &m.execs[m.execByID[e.CallID]]
	if e.Approved {
		detail := "approved"
		if e.Why != "" {
			detail = "approved: " + e.Why
		}
		x.Status, x.Progress = ExecRunning, detail
		return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: detail}}
	}
	result := deniedResult
	if e.Why != "" {
		result = "tool error: denied: " + e.Why + "; the command was not run"
	}
	return m.onToolCompleted(ToolCompleted{Turn: e.Turn, CallID: e.CallID, Result: result, IsError: true})
}
