package fsm

import (
	"fmt"
	"strings"
)

// Elicited records a question an MCP server put to the user while tool
// call CallID of turn Turn ran (MCP elicitation), and the answer sent
// back. The caller steps it once the answer is settled (the user's, or
// the one loom gave without the user: Why says how), before the server
// gets it; the call goes on running. Values holds what was sent as it
// may be shown: a secret's value is masked by the caller, so a journal
// of this event never holds one.
type Elicited struct {
	Turn   uint64
	CallID string
	// Server is the MCP server's name.
	Server string
	// Message is the server's question.
	Message string
	// Mode is "form" or "url".
	Mode string
	// URL is the page a url-mode request asked the user to open.
	URL string
	// Action is "accept", "decline" or "cancel".
	Action string
	// Values are the accepted form's values as shown (secrets masked),
	// in the form's order.
	Values []ElicitedValue
	// Why, when set, says that loom answered without the user, and how
	// ("exec --elicit decline", "no one to ask").
	Why string
}

// ElicitedValue is one sent value, as it may be shown.
type ElicitedValue struct {
	Name  string
	Value string
}

func (Elicited) isEvent() {}

func (e Elicited) call() (uint64, string) { return e.Turn, e.CallID }

// Describe implements [Event].
func (e Elicited) Describe() string {
	s := fmt.Sprintf("Elicited turn=%d call=%s server=%s mode=%s %s %q", e.Turn, e.CallID, e.Server, e.Mode, e.Action, e.Message)
	if e.URL != "" {
		s += " url=" + e.URL
	}
	for _, v := range e.Values {
		s += fmt.Sprintf(" %s=%q", v.Name, v.Value)
	}
	if e.Why != "" {
		s += fmt.Sprintf(" why=%q", e.Why)
	}
	return s
}

// Summary is the exchange in a line, as the tool call shows it:
// `asks "Deploy?": accepted (env=prod)`.
func (e Elicited) Summary() string {
	words := map[string]string{"accept": "accepted", "decline": "declined", "cancel": "cancelled"}
	verdict, ok := words[e.Action]
	if !ok {
		verdict = e.Action
	}
	s := fmt.Sprintf("%s asks %q: %s", e.Server, firstLine(e.Message), verdict)
	if e.URL != "" {
		s = fmt.Sprintf("%s asks to open %s: %s", e.Server, e.URL, verdict)
	}
	if len(e.Values) > 0 {
		parts := make([]string, len(e.Values))
		for i, v := range e.Values {
			parts[i] = v.Name + "=" + v.Value
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if e.Why != "" {
		s += " — " + e.Why
	}
	return s
}

// onElicited shows the exchange with the call, which goes on running.
func (m *Machine) onElicited(e Elicited) []Action {
	x := &m.execs[m.execByID[e.CallID]]
	x.Status, x.Progress = ExecRunning, e.Summary()
	return []Action{DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: x.Progress}}
}
