package fsm

import (
	"fmt"
	"strings"
)

// Modes. A conversation is in one mode at a time: agent (the default:
// every tool), plan or ask (read-only: only tools without side effects
// run; a mutating call is refused with a result that says why). The mode
// is conversation state: SetMode switches it, the journal replays it, a
// compaction's summary restates it, and a rewind or resume keeps it. The
// model is told of a switch in a note placed before its next request.

// Mode is a conversation's mode.
type Mode string

// The modes.
const (
	ModeAgent Mode = "agent"
	ModePlan  Mode = "plan"
	ModeAsk   Mode = "ask"
)

// Modes lists the modes, in the order a client offers them.
var Modes = []Mode{ModeAsk, ModePlan, ModeAgent}

// ReadOnly reports whether the mode refuses tools with side effects.
func (m Mode) ReadOnly() bool { return m == ModePlan || m == ModeAsk }

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return m == ModeAgent || m == ModePlan || m == ModeAsk }

// Description says what the mode lets the agent do, for a mode picker.
func (m Mode) Description() string {
	switch m {
	case ModePlan:
		return "Read-only: investigate and propose a plan to approve before anything changes"
	case ModeAsk:
		return "Read-only: answer questions about the code, change nothing"
	default:
		return "Edit files and run commands (as tools.bash and tools.edits allow)"
	}
}

// SetMode switches the conversation's mode. It is valid in every state
// but ShuttingDown: a turn in flight goes on, its next tool calls under
// the new mode. Switching to the mode in force changes nothing.
type SetMode struct {
	Mode Mode
}

// ModeChanged tells the caller that the conversation's mode is now Mode
// (SetMode, an accepted plan, a reset).
type ModeChanged struct {
	Mode Mode
}

func (SetMode) isEvent()      {}
func (ModeChanged) isAction() {}

// Describe implements [Event].
func (e SetMode) Describe() string { return "SetMode " + string(e.Mode) }

// Describe implements [Action].
func (a ModeChanged) Describe() string { return "ModeChanged " + string(a.Mode) }

// Mode returns the conversation's mode.
func (m *Machine) Mode() Mode {
	switch {
	case m.cfg.ReadOnly && !m.mode.ReadOnly():
		return ModeAsk // locked read-only (Config.ReadOnly)
	case m.mode == "":
		return ModeAgent
	}
	return m.mode
}

func (m *Machine) checkSetMode(e SetMode) error {
	if !e.Mode.Valid() {
		return m.invalid(e, `mode must be "agent", "plan" or "ask"`)
	}
	return nil
}

func (m *Machine) onSetMode(e SetMode) []Action {
	if e.Mode == m.Mode() {
		return nil
	}
	m.mode = e.Mode
	return []Action{ModeChanged(e)}
}

// modeNote is what the model under c is told when the mode becomes mode.
func (c Config) modeNote(mode Mode) string {
	may := "You may read, list and search files; editing or writing files and running commands are refused. "
	if c.readOnlyCommands() {
		may = "You may read, list and search files, and run commands that only read (they run in a sandbox where the " +
			"workspace is read-only: anything that writes there fails); editing or writing files is refused. "
	}
	switch {
	case c.ReadOnly && mode.ReadOnly():
		return "[loom] You are a read-only agent: you may read, list and search files; editing or writing files and running commands are refused."
	case mode == ModePlan:
		return "[loom] The user switched to plan mode (read-only): investigate and plan, change nothing. " + may +
			"Keep a todo list with " + UpdatePlanTool + " if it helps. When your plan is ready, call " + ProposePlanTool +
			" with it: the user accepts it (you then switch to agent mode and carry it out), edits it, or rejects it with a comment."
	case mode == ModeAsk:
		return "[loom] The user switched to ask mode (read-only): answer the user's questions, change nothing. " + strings.TrimSpace(may)
	default:
		return "[loom] The user switched to agent mode: you may edit files and run commands again (as the user's settings allow)."
	}
}

// flushMode tells the model of a mode switch not yet told, in a note of
// its own, before its next request.
func (m *Machine) flushMode() {
	told := m.told
	if told == "" {
		told = ModeAgent
	}
	if told == m.Mode() {
		return
	}
	m.history = append(m.history, Message{Role: RoleUser, Content: m.cfg.modeNote(m.Mode()), Note: true})
	m.told = m.Mode()
}

// readOnlyCommands reports whether some tool runs read-only in a
// read-only mode (ToolSpec.RunsReadOnly).
func (c Config) readOnlyCommands() bool {
	for _, t := range c.Tools {
		if t.Mutating && t.RunsReadOnly {
			return true
		}
	}
	return false
}

// modeRefusal is the result of a call the mode refuses ("" when it runs).
func (m *Machine) modeRefusal(c ToolCall) string {
	mode, spec := m.Mode(), m.cfg.Tools[c.Name]
	if m.cfg.ReadOnly && mode.ReadOnly() && spec.Mutating {
		return fmt.Sprintf("tool error: %s is refused: you are a read-only agent (your parent conversation is read-only, or your "+
			"definition makes you one); nothing was run or written. Read, list and search files instead, and say in your answer what should change.", c.Name)
	}
	return ModeRefusal(mode, c.Name, spec)
}

// ModeRefusal is the result of a call of the tool name (spec) that mode
// refuses: a mutating tool that does not run read-only, in a read-only
// mode. It is "" when the call runs. The machine refuses such calls
// itself; a runner of tool calls (workspace/toolcall) asks it again of
// a policy it was handed.
func ModeRefusal(mode Mode, name string, spec ToolSpec) string {
	if !mode.ReadOnly() || !spec.Mutating || spec.RunsReadOnly {
		return ""
	}
	what := "investigate and propose a plan with " + ProposePlanTool
	if mode == ModeAsk {
		what = "answer the user's question"
	}
	return fmt.Sprintf("tool error: %s is refused in %s mode: the conversation is read-only (the user asked you to %s, not to change anything); "+
		"nothing was run or written. Read, list and search files instead; the user switches to agent mode to let you make changes.", name, mode, what)
}

// carriedState is what a compaction's summary adds so that the mode and
// the todo list outlive the messages that set them.
func (m *Machine) carriedState() string {
	var b strings.Builder
	if m.Mode() != ModeAgent {
		b.WriteString("\n\n")
		b.WriteString(m.cfg.modeNote(m.Mode()))
	}
	if len(m.plan) > 0 {
		b.WriteString("\n\n[loom] Your todo list (" + UpdatePlanTool + "), as it stands:\n")
		b.WriteString(DescribePlan(m.plan, "\n"))
	}
	return b.String()
}
