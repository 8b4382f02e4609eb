package fsm

import (
	"fmt"
	"slices"
	"strings"
)

// Each user turn is a checkpoint. Rewind takes the workspace's files, the
// conversation or both back to just before a checkpoint's prompt; Redo
// undoes the last rewind, until the next prompt.

// Restore says what a Rewind takes back.
type Restore string

// What a rewind restores.
const (
	RestoreFiles        Restore = "files"
	RestoreConversation Restore = "conversation"
	RestoreBoth         Restore = "both"
)

// files reports whether r takes back the agent's file changes.
func (r Restore) files() bool { return r == RestoreFiles || r == RestoreBoth }

// conversation reports whether r cuts the conversation back.
func (r Restore) conversation() bool { return r == RestoreConversation || r == RestoreBoth }

// Rewind goes back to just before turn Turn's prompt. Valid only between
// turns, for a turn that is a checkpoint (see [Machine.Checkpoints]); a
// conversation rewind also needs the turn not to be compacted into a
// summary.
type Rewind struct {
	Turn    uint64
	Restore Restore
	// Left are the files a files rewind left as they were, because the
	// user's later edits could not be kept apart from the agent's; the
	// model is told, so it does not take them for restored.
	Left []string `json:",omitempty"`
}

// Redo undoes the last Rewind not yet undone. Valid only between turns,
// and only until the next prompt (or Reset, or compaction).
type Redo struct{}

// RewindFiles tells the caller that every change the agent made to the
// files at or after turn Turn is to be taken back (its own hunks only, so
// that the user's later edits stay) and recorded, so that RedoFiles can
// undo it. A caller may do that work before it steps the Rewind, so that
// a refused files rewind changes nothing; the action then confirms it.
type RewindFiles struct {
	Turn uint64
	// Left are the files the caller's work left as they were (the
	// event's Left).
	Left []string
}

// ConversationRewound tells the caller that the conversation was cut back
// to just before turn Turn, whose prompt Prompt goes back to the user's
// input for editing.
type ConversationRewound struct {
	Turn   uint64
	Prompt string
}

// RedoFiles tells the caller to undo its last RewindFiles (to turn
// Turn); like RewindFiles, the work may be done before Redo is stepped.
type RedoFiles struct {
	Turn uint64
}

// ConversationRedone tells the caller that the conversation cut back by
// the rewind to turn Turn is whole again.
type ConversationRedone struct {
	Turn uint64
}

// Checkpoint is a user turn one can rewind to.
type Checkpoint struct {
	Turn   uint64
	Prompt string
	// Compacted is set when the turn was folded into a compaction
	// summary: its files can be restored, its conversation no longer.
	Compacted bool
}

// checkpoint is a Checkpoint and where its prompt is in the history (-1
// once compacted).
type checkpoint struct {
	turn   uint64
	prompt string
	at     int
	// told and plan are the mode the conversation had told the model and
	// the todo list when the turn started, for a conversation rewind.
	told Mode
	plan []PlanItem
}

// rewound is what a rewind replaced, for Redo.
type rewound struct {
	turn        uint64
	restore     Restore
	history     []Message
	checkpoints timeline
	turnStart   int
	turnStarts  []int
	notes       []string
	told        Mode
	plan        []PlanItem
}

func (Rewind) isEvent()               {}
func (Redo) isEvent()                 {}
func (RewindFiles) isAction()         {}
func (ConversationRewound) isAction() {}
func (RedoFiles) isAction()           {}
func (ConversationRedone) isAction()  {}

// Describe implements [Event].
func (e Rewind) Describe() string {
	d := fmt.Sprintf("Rewind turn=%d restore=%s", e.Turn, e.Restore)
	if len(e.Left) > 0 {
		d += fmt.Sprintf(" left=%v", e.Left)
	}
	return d
}

// Describe implements [Event].
func (Redo) Describe() string { return "Redo" }

// Describe implements [Action].
func (a RewindFiles) Describe() string {
	if len(a.Left) > 0 {
		return fmt.Sprintf("RewindFiles turn=%d left=%v", a.Turn, a.Left)
	}
	return fmt.Sprintf("RewindFiles turn=%d", a.Turn)
}

// Describe implements [Action].
func (a ConversationRewound) Describe() string {
	return fmt.Sprintf("ConversationRewound turn=%d prompt=%s", a.Turn, quote(a.Prompt))
}

// Describe implements [Action].
func (a RedoFiles) Describe() string { return fmt.Sprintf("RedoFiles turn=%d", a.Turn) }

// Describe implements [Action].
func (a ConversationRedone) Describe() string {
	return fmt.Sprintf("ConversationRedone turn=%d", a.Turn)
}

// Checkpoints returns the turns one can rewind to, oldest first.
func (m *Machine) Checkpoints() []Checkpoint {
	out := make([]Checkpoint, len(m.checkpoints))
	for i, c := range m.checkpoints {
		out[i] = Checkpoint{Turn: c.turn, Prompt: c.prompt, Compacted: c.at < 0}
	}
	return out
}

// CanRedo reports whether a Redo would apply now.
func (m *Machine) CanRedo() bool { return len(m.redo) > 0 && m.kind == WaitingForUserInput }

// timeline is the turns one can rewind to, oldest first.
type timeline []checkpoint

// find returns the index of turn's checkpoint, -1 when there is none.
func (t timeline) find(turn uint64) int {
	return slices.IndexFunc(t, func(c checkpoint) bool { return c.turn == turn })
}

// compacted follows a compaction that replaced history[from:to] by one
// summary message: later prompts move down, the compacted ones are lost
// (at -1: only their files can be restored).
func (t timeline) compacted(from, to int) {
	for i := range t {
		c := &t[i]
		switch {
		case c.at >= to:
			c.at -= to - from - 1
		case c.at >= from:
			c.at = -1
		}
	}
}

// checkRewind validates a Rewind.
func (m *Machine) checkRewind(e Rewind) error {
	if m.kind != WaitingForUserInput {
		return m.invalid(e, "rewind only between turns: cancel the turn first")
	}
	if e.Restore != RestoreFiles && e.Restore != RestoreConversation && e.Restore != RestoreBoth {
		return m.invalid(e, `restore must be "files", "conversation" or "both"`)
	}
	i := m.checkpoints.find(e.Turn)
	if i < 0 {
		return m.invalid(e, fmt.Sprintf("no checkpoint for turn %d", e.Turn))
	}
	if e.Restore.conversation() && m.checkpoints[i].at < 0 {
		return m.invalid(e, fmt.Sprintf("turn %d was compacted into a summary: only its files can be restored", e.Turn))
	}
	return nil
}

// checkRedo validates a Redo.
func (m *Machine) checkRedo(e Redo) error {
	if m.kind != WaitingForUserInput {
		return m.invalid(e, "redo only between turns")
	}
	if len(m.redo) == 0 {
		return m.invalid(e, "nothing to redo: no rewind since the last prompt")
	}
	return nil
}

// rewindNote tells the model, before its next request, that the files it
// changed were taken back while the conversation stayed.
func rewindNote(turn uint64, left []string) string {
	note := fmt.Sprintf("[loom] the user restored the files to how they were before turn %d: every change you made since then was taken back (their own edits stay)", turn)
	if len(left) > 0 {
		note += fmt.Sprintf(", except in %s, left as it is because the user's later edits there overlap yours", strings.Join(left, ", "))
	}
	return note + ". Read files again before editing them."
}

// onRewind: WaitingForUserInput -> WaitingForUserInput, with the
// conversation cut back and/or the files' rewind asked of the caller.
func (m *Machine) onRewind(e Rewind) []Action {
	cp := m.checkpoints[m.checkpoints.find(e.Turn)]
	saved := rewound{turn: e.Turn, restore: e.Restore, notes: slices.Clone(m.notes)}
	var acts []Action
	if e.Restore.files() {
		acts = append(acts, RewindFiles{Turn: e.Turn, Left: e.Left})
	}
	if e.Restore.conversation() {
		saved.history = m.history
		saved.checkpoints = m.checkpoints
		saved.turnStart, saved.turnStarts = m.turnStart, m.turnStarts
		saved.told, saved.plan = m.told, m.plan
		// Capping the slice makes the next append copy, so the saved
		// history (and requests that share it) is never overwritten.
		m.history = m.history[:cp.at:cp.at]
		i := m.checkpoints.find(e.Turn)
		m.checkpoints = slices.Clone(m.checkpoints[:i])
		m.turnStarts = slices.DeleteFunc(slices.Clone(m.turnStarts), func(at int) bool { return at >= cp.at })
		m.turnStart = 0
		if n := len(m.turnStarts); n > 0 {
			m.turnStart = m.turnStarts[n-1]
		}
		m.elided.forget()
		m.prompt = promptCount{}
		m.refreshElision(false)
		m.told = cp.told
		acts = append(acts, ConversationRewound{Turn: e.Turn, Prompt: cp.prompt})
		if !slices.Equal(m.plan, cp.plan) {
			m.plan = cp.plan
			acts = append(acts, PlanUpdated{Turn: m.turn, Items: m.Plan()})
		}
	} else {
		m.notes = append(m.notes, rewindNote(e.Turn, e.Left))
	}
	m.redo = append(m.redo, saved)
	return acts
}

// onRedo undoes the last rewind.
func (m *Machine) onRedo() []Action {
	r := m.redo[len(m.redo)-1]
	m.redo = m.redo[:len(m.redo)-1]
	var acts []Action
	if r.restore.files() {
		acts = append(acts, RedoFiles{Turn: r.turn})
	}
	if r.restore.conversation() {
		m.history = r.history
		m.checkpoints = r.checkpoints
		m.turnStart, m.turnStarts = r.turnStart, r.turnStarts
		m.elided.forget()
		m.prompt = promptCount{}
		m.refreshElision(false)
		m.told = r.told
		acts = append(acts, ConversationRedone{Turn: r.turn})
		if !slices.Equal(m.plan, r.plan) {
			m.plan = r.plan
			acts = append(acts, PlanUpdated{Turn: m.turn, Items: m.Plan()})
		}
	}
	m.notes = r.notes
	return acts
}

// flushNotes appends the pending notes to the conversation.
func (m *Machine) flushNotes() {
	for _, n := range m.notes {
		m.history = append(m.history, Message{Role: RoleUser, Content: n, Note: true})
	}
	m.notes = nil
}
