package fsm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Agent hooks (Claude Code's, Codex's, VS Code's, loom's own) are
// commands the caller runs at points of a turn; what they said enters
// the conversation here, as a HooksDecided event, so that the journal
// holds it and a replay, a rewind or a resume shows it without running a
// hook again. The caller runs the hooks; the machine only reads their
// reports:
//
//   - PreToolUse, before a call runs (the call is still in the batch): a
//     deny completes the call with a tool error carrying the reason, and
//     the caller must not run it nor send its ToolCompleted; an ask is the
//     caller's to put to the user (an ApprovalDecided follows); added
//     context joins the call's result; a rewritten input (Input, see
//     Rewrite) becomes the arguments the call runs with — the caller runs
//     that, through the approval and checks the model's would have met —
//     and the model's own call stays in the conversation as it was;
//   - PostToolUse, after the call ran (under review: once the decision
//     applied it) and before its ToolCompleted: a block's reason and
//     added context join the call's result, which the model reads;
//   - UserPromptSubmit and SessionStart, before the prompt is stepped:
//     shown; their effect rides on the UserInput that follows
//     (UserInput.HookContext, UserInput.Refused);
//   - Stop, when Config.StopHooks is set and a response ends the turn:
//     the machine waits in PostToolsHook after a RunStopHooks action; a
//     block continues the turn with the reason as a message to the model,
//     at most MaxStopContinues times a turn; otherwise the turn ends;
//   - PreCompact and Notification: shown only.
//
// Any hook may end the turn ("continue": false): the turn ends instead of
// the next model request. Every report becomes a DisplayHook action.

// Hook events, as the formats name them.
const (
	HookPreToolUse       = "PreToolUse"
	HookPostToolUse      = "PostToolUse"
	HookUserPromptSubmit = "UserPromptSubmit"
	HookStop             = "Stop"
	HookSessionStart     = "SessionStart"
	HookPreCompact       = "PreCompact"
	HookNotification     = "Notification"
)

// MaxStopContinues bounds how often Stop hooks continue one turn.
const MaxStopContinues = 3

// HookReport is what one hook said (or why it said nothing).
type HookReport struct {
	// Hook names it: where it is defined, its event and its command.
	Hook string
	// Decision is "", "allow", "deny", "ask" or "block".
	Decision string `json:",omitempty"`
	// Reason goes with the decision.
	Reason string `json:",omitempty"`
	// Context is added for the model.
	Context string `json:",omitempty"`
	// Message is shown to the user.
	Message string `json:",omitempty"`
	// Problem says why it decided nothing (failed, timed out, invalid
	// output); Held why it was not run (not trusted, changed since).
	Problem string `json:",omitempty"`
	Held    string `json:",omitempty"`
	// StopTurn ends the turn; StopReason says why, to the user.
	StopTurn   bool   `json:",omitempty"`
	StopReason string `json:",omitempty"`
	// Input is the call's input as a PreToolUse hook rewrote it: a JSON
	// object, loom's arguments of the call, whole.
	Input string `json:",omitempty"`
	// Quiet: the hook asked not to be shown (suppressOutput); the caller
	// shows it only when it decided, rewrote, failed or was held back.
	Quiet bool `json:",omitempty"`
}

// HooksDecided delivers the reports of the hooks that one hook event ran,
// for turn Turn (and tool call CallID for PreToolUse and PostToolUse).
type HooksDecided struct {
	Turn   uint64
	Event  string
	CallID string `json:",omitempty"`
	Hooks  []HookReport
}

// RunStopHooks asks the caller to run the Stop hooks of turn Turn and to
// feed their HooksDecided. Active is set when Stop hooks already
// continued this turn; LastMessage is the model's last text.
type RunStopHooks struct {
	Turn        uint64
	Active      bool
	LastMessage string
}

// DisplayHook asks the caller to show what a hook said.
type DisplayHook struct {
	Turn   uint64
	Event  string
	CallID string
	Report HookReport
}

func (HooksDecided) isEvent()  {}
func (RunStopHooks) isAction() {}
func (DisplayHook) isAction()  {}

// Describe implements [Event].
func (e HooksDecided) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HooksDecided turn=%d event=%s", e.Turn, e.Event)
	if e.CallID != "" {
		fmt.Fprintf(&b, " call=%s", e.CallID)
	}
	for _, r := range e.Hooks {
		b.WriteString(" [" + r.describe() + "]")
	}
	return b.String()
}

func (r HookReport) describe() string {
	s := quote(r.Hook)
	add := func(k, v string) {
		if v != "" {
			s += " " + k + "=" + quote(v)
		}
	}
	add("decision", r.Decision)
	add("reason", r.Reason)
	add("context", r.Context)
	add("message", r.Message)
	add("problem", r.Problem)
	add("held", r.Held)
	if r.StopTurn {
		s += " stop"
		add("stopReason", r.StopReason)
	}
	add("input", r.Input)
	if r.Quiet {
		s += " quiet"
	}
	return s
}

// Describe implements [Action].
func (a RunStopHooks) Describe() string {
	return fmt.Sprintf("RunStopHooks turn=%d active=%v last=%s", a.Turn, a.Active, quote(a.LastMessage))
}

// Describe implements [Action].
func (a DisplayHook) Describe() string {
	call := ""
	if a.CallID != "" {
		call = " call=" + a.CallID
	}
	return fmt.Sprintf("DisplayHook turn=%d event=%s%s %s", a.Turn, a.Event, call, a.Report.describe())
}

// checkHookCompleted decides whether the post-tool hook's end applies
// now: the machine waits for it in this turn, not for the Stop hooks.
func (m *Machine) checkHookCompleted(e PostToolsHookCompleted) error {
	switch {
	case m.kind == PostToolsHook && e.Turn == m.turn && !m.stopHooks:
		return nil
	case e.Turn <= m.turn:
		return m.stale(e)
	default:
		return m.invalid(e, "unknown turn")
	}
}

// checkHooks decides whether a HooksDecided applies now.
func (m *Machine) checkHooks(e HooksDecided) error {
	onCall, pending := false, false
	switch e.Event {
	case HookPreToolUse, HookPostToolUse:
		if err := m.checkTool(e, e.Turn, e.CallID); err != nil {
			return err
		}
		status := m.execs[m.execByID[e.CallID]].Status
		if status == ExecReviewing {
			return m.invalid(e, "the call waits for the user's review")
		}
		onCall, pending = true, status == ExecPending
	case HookStop:
		switch {
		case m.kind == PostToolsHook && m.stopHooks && e.Turn == m.turn:
		case e.Turn <= m.turn:
			return m.stale(e)
		default:
			return m.invalid(e, "no Stop hooks were asked for")
		}
	case HookUserPromptSubmit, HookSessionStart, HookPreCompact, HookNotification:
	default:
		return m.invalid(e, "unknown hook event")
	}
	if why := inputProblem(e, onCall, pending); why != "" {
		return m.invalid(e, why)
	}
	return nil
}

// inputProblem says what is wrong with the inputs e's hooks rewrote, ""
// when nothing is: a rewritten input is a JSON object, of a call (onCall)
// not started yet (pending), and only PreToolUse hooks rewrite.
func inputProblem(e HooksDecided, onCall, pending bool) string {
	for _, r := range e.Hooks {
		switch {
		case r.Input == "" || !onCall:
		case !isJSONObject(r.Input):
			return "a rewritten input is not a JSON object"
		case !pending:
			return "a call that started cannot be rewritten"
		}
	}
	if e.Event != HookPreToolUse {
		for _, r := range e.Hooks {
			if r.Input != "" {
				return "only a PreToolUse hook rewrites a call's input"
			}
		}
	}
	return ""
}

func isJSONObject(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return t != "" && t[0] == '{' && json.Valid([]byte(s))
}

// onHooksDecided applies what the hooks said.
func (m *Machine) onHooksDecided(e HooksDecided) []Action {
	var acts []Action
	var denied, blocked, context []string
	var failed []string
	for _, r := range e.Hooks {
		acts = append(acts, DisplayHook{Turn: e.Turn, Event: e.Event, CallID: e.CallID, Report: r})
		if r.Held == "" && r.Problem != "" {
			// The model is told a hook of its call decided nothing
			// (timed out and killed, crashed): its silence is no
			// verdict.
			failed = append(failed, fmt.Sprintf("%s hook %s failed (%s); it decided nothing", e.Event, r.Hook, r.Problem))
		}
		if r.Held != "" || r.Problem != "" {
			continue
		}
		if r.StopTurn && m.busy() {
			m.stopTurn = true
		}
		switch r.Decision {
		case "deny":
			denied = append(denied, hookSaid(r))
		case "block":
			blocked = append(blocked, hookSaid(r))
		}
		if r.Context != "" {
			context = append(context, r.Context)
		}
	}
	rewrite, by := Rewrite(e.Hooks)
	switch e.Event {
	case HookPreToolUse, HookPostToolUse:
		x := &m.execs[m.execByID[e.CallID]]
		if len(denied) > 0 {
			result := "tool error: blocked by a PreToolUse hook; the tool was not run. " + strings.Join(denied, " ")
			if len(context) > 0 {
				result += "\n" + strings.Join(context, "\n")
			}
			return append(acts, m.onToolCompleted(ToolCompleted{Turn: e.Turn, CallID: e.CallID, Result: result, IsError: true})...)
		}
		x.hookNotes = append(x.hookNotes, failed...)
		for _, b := range blocked {
			x.hookNotes = append(x.hookNotes, "PostToolUse hook feedback: "+b)
		}
		x.hookNotes = append(x.hookNotes, context...)
		if rewrite != "" && rewrite != x.Call.Arguments {
			acts = append(acts, m.rewriteCall(x, rewrite, by)...)
		}
	case HookStop:
		return append(acts, m.afterStopHooks(blocked)...)
	}
	return acts
}

// hookSaid is a report's reason as the model reads it.
func hookSaid(r HookReport) string {
	if r.Reason == "" {
		return "(" + r.Hook + ")"
	}
	return r.Reason + " (" + r.Hook + ")"
}

// hookResult is a call's result with what its hooks added.
func hookResult(x *ToolExecution, result string) string {
	if len(x.hookNotes) == 0 {
		return result
	}
	return strings.TrimRight(result, "\n") + "\n\n[hooks]\n" + strings.Join(x.hookNotes, "\n")
}

// endOrStop ends the turn after a response without tool calls, unless
// Stop hooks are configured: then the machine waits in PostToolsHook for
// their HooksDecided.
func (m *Machine) endOrStop(text string) []Action {
	if !m.cfg.StopHooks {
		return m.endTurn(nil, TurnDone)
	}
	m.kind, m.stopHooks = PostToolsHook, true
	return []Action{RunStopHooks{Turn: m.turn, Active: m.stopContinued > 0, LastMessage: text}}
}

// afterStopHooks continues the turn when a Stop hook blocked (and the
// bound allows it), else ends it.
func (m *Machine) afterStopHooks(blocked []string) []Action {
	m.stopHooks = false
	if len(blocked) == 0 || m.stopContinued >= MaxStopContinues || m.stopTurn {
		if m.stopTurn {
			m.stopTurn = false
		}
		return m.endTurn(nil, TurnDone)
	}
	m.stopContinued++
	// What changed meanwhile is told first: the hook's reason is the
	// last word the model reads.
	m.flushChanged()
	m.history = append(m.history, Message{Role: RoleUser, Content: "[loom] a Stop hook kept the turn going: " + strings.Join(blocked, " "), Note: true})
	return m.becomeCallingLlm(nil)
}

// refuseTurn answers an input a UserPromptSubmit hook refused: the turn
// starts and ends at once, the prompt stays out of the conversation, and
// the user is given it back with the reason.
func (m *Machine) refuseTurn(in UserInput) []Action {
	m.turn += 1 + m.dropped
	m.dropped = 0
	m.turnUsage = Usage{}
	msg := fmt.Sprintf("a UserPromptSubmit hook refused your prompt: %s. It was not sent to the model; here it is, to change and send again:\n\n%s", in.Refused, in.Text)
	return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: ErrorOther, Message: msg}}, TurnFailed)
}

// rewriteCall makes a PreToolUse hook's rewritten input the arguments
// call x runs with: the model's own call stays in the conversation as it
// asked it, and its result says what ran instead; the user is shown the
// new arguments before anything asks them or runs.
func (m *Machine) rewriteCall(x *ToolExecution, input, by string) []Action {
	x.Call.Arguments = input
	x.hookNotes = append(x.hookNotes, "A PreToolUse hook ("+by+") rewrote this call's input; it ran with: "+input)
	return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolPending, Detail: RewrittenWords, Arguments: input}}
}

// RewrittenWords is the detail of a call shown again with the arguments
// a hook rewrote it to.
const RewrittenWords = "input rewritten by a PreToolUse hook"

// Rewrite is the input PreToolUse reports rewrite their call to, and the
// hook that wrote it: the last live report with an input, in definition
// order (the journal keeps that order, so a replay takes the same); ""
// when none did. A deny in the same reports wins over it.
func Rewrite(reports []HookReport) (input, by string) {
	for _, r := range reports {
		if r.Held == "" && r.Problem == "" && r.Input != "" {
			input, by = r.Input, r.Hook
		}
	}
	return input, by
}
