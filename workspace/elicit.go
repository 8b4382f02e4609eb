package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
)

// Elicitation is an MCP server's question to the user of a conversation,
// asked while one of its tool calls runs.
type Elicitation struct {
	Folder string
	// Conversation is the id of the conversation that asks.
	Conversation string
	Turn         uint64
	// Tool and CallID are the tool call the server runs.
	Tool   string
	CallID string
	// Request is the question: the server, its message, the form or the
	// URL.
	Request elicit.Request
	// Problems, when set, say why the user's last answer was not sent
	// (each names its field): the form is asked again.
	Problems []string
	// Values are that answer's values, secrets left out, to fill the
	// form again with.
	Values map[string]string
}

// Elicitor is an optional interface of an Editor that shows a server's
// form or URL to the user and returns the answer (LSP loom/elicit, exec's
// --elicit). An Editor without it is asked through Approve: a URL, or a
// form whose required fields all have defaults, is allowed or denied as
// a whole; any other form is declined.
type Elicitor interface {
	// Elicit asks the user. It returns ErrUnsupported when this client
	// cannot show the request (then Approve is used), and Answer.Why set
	// when the answer was given without the user.
	Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error)
}

// ElicitAnswer is an Elicitor's answer.
type ElicitAnswer struct {
	elicit.Answer
	// Why, when set, says the answer was given without the user, and how
	// ("exec --elicit decline").
	Why string
}

// maxElicitTries bounds how often a form is asked again after answers
// that do not fit it; then it is declined.
const maxElicitTries = 5

// elicitations asks the user an MCP server's questions for one
// conversation, on the worker goroutine of the call that runs the
// server's tool: through the front end's Elicitor, else as an approval.
type elicitations struct {
	dir      string
	redactor *secret.Redactor
	ed       Editor
	// asker is the id of the conversation whose client asks: its own, or
	// its root's for a subagent.
	asker func() string
	// approve asks through an approval (out.approve).
	approve func(ctx context.Context, a Approval, timeout time.Duration) (bool, error)
	// step steps the exchange on the owner goroutine, unless the turn is
	// gone (ownerLoop.postEventLive).
	step func(ctx context.Context, ev fsm.Event)
}

// ask asks the user the question of an MCP server running call c of
// turn: through the front end, checked against the form (asked again
// with the problems, nothing typed lost), within timeout; the exchange
// is stepped as an fsm.Elicited (secrets masked) before the answer goes
// back.
func (s *elicitations) ask(ctx context.Context, turn uint64, c fsm.ToolCall, req elicit.Request, timeout time.Duration) (elicit.Result, error) {
	req.Message = s.redactor.String(req.Message)
	e := Elicitation{Folder: s.dir, Conversation: s.asker(), Turn: turn, Tool: c.Name, CallID: c.ID, Request: req}
	res, ev := s.untilFit(ctx, e, timeout)
	ev.Turn, ev.CallID, ev.Server, ev.Message, ev.Mode, ev.URL = turn, c.ID, req.Server, req.Message, req.Mode, req.URL
	if res.Action == elicit.Accept {
		for _, v := range req.Shown(res.Content) {
			ev.Values = append(ev.Values, fsm.ElicitedValue{Name: v.Name, Value: s.redactor.String(v.Value)})
		}
	}
	ev.Action = res.Action
	s.step(ctx, ev)
	return res, nil
}

// untilFit asks until an answer fits; the event returned carries the
// action and why.
func (s *elicitations) untilFit(ctx context.Context, e Elicitation, timeout time.Duration) (elicit.Result, fsm.Elicited) {
	ed, _ := s.ed.(Elicitor)
	for try := 1; ; try++ {
		ans, err := s.once(ctx, ed, e, timeout)
		switch {
		case errors.Is(err, errApprovalTimeout):
			return elicit.Result{Action: elicit.Cancel}, fsm.Elicited{Why: "no answer in time"}
		case err != nil:
			return elicit.Result{Action: elicit.Cancel}, fsm.Elicited{Why: "no answer: " + err.Error()}
		}
		switch ans.Action {
		case elicit.Decline, elicit.Cancel:
			return elicit.Result{Action: ans.Action}, fsm.Elicited{Why: ans.Why}
		case elicit.Accept:
		default:
			return elicit.Result{Action: elicit.Cancel}, fsm.Elicited{Why: fmt.Sprintf("the client answered %q", ans.Action)}
		}
		if e.Request.Mode == elicit.ModeURL {
			return elicit.Result{Action: elicit.Accept}, fsm.Elicited{Why: ans.Why}
		}
		content, problems := e.Request.Check(ans.Values)
		if len(problems) == 0 {
			return elicit.Result{Action: elicit.Accept, Content: content}, fsm.Elicited{Why: ans.Why}
		}
		if ans.Why != "" || try >= maxElicitTries {
			why := "the answer did not fit the form: " + strings.Join(problems, "; ")
			return elicit.Result{Action: elicit.Decline}, fsm.Elicited{Why: why}
		}
		e.Problems, e.Values = problems, e.Request.Kept(ans.Values)
	}
}

// once asks the front end once: its Elicitor, else an approval.
func (s *elicitations) once(ctx context.Context, ed Elicitor, e Elicitation, timeout time.Duration) (ElicitAnswer, error) {
	if ed != nil {
		asking, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			asking, cancel = context.WithTimeoutCause(ctx, timeout, errApprovalTimeout)
		}
		ans, err := ed.Elicit(asking, e)
		cancel()
		if err == nil || !errors.Is(err, ErrUnsupported) {
			if err != nil && ctx.Err() == nil && errors.Is(context.Cause(asking), errApprovalTimeout) {
				err = errApprovalTimeout
			}
			return ans, err
		}
	}
	return s.byApproval(ctx, e, timeout)
}

// byApproval asks a client that can only allow or deny: a URL to open,
// or a form's defaults.
func (s *elicitations) byApproval(ctx context.Context, e Elicitation, timeout time.Duration) (ElicitAnswer, error) {
	r := e.Request
	q := fmt.Sprintf("MCP server %s asks: %s", r.Server, r.Message)
	if r.Mode == elicit.ModeURL {
		q += "\nOpen this page yourself, then allow: " + r.URL
	} else {
		content, missing := r.Defaults()
		if len(missing) > 0 {
			return ElicitAnswer{Answer: elicit.Answer{Action: elicit.Decline},
				Why: "this client cannot show a form; required without a default: " + strings.Join(missing, ", ")}, nil
		}
		var parts []string
		for _, v := range r.Shown(content) {
			parts = append(parts, v.Name+"="+v.Value)
		}
		if len(parts) > 0 {
			q += "\nAllow sends: " + strings.Join(parts, ", ")
		}
	}
	ok, err := s.approve(ctx, Approval{Folder: s.dir, Turn: e.Turn, Tool: e.Tool, CallID: e.CallID, Detail: q, Server: r.Server}, timeout)
	switch {
	case errors.Is(err, ErrUnsupported):
		return ElicitAnswer{Answer: elicit.Answer{Action: elicit.Decline}, Why: "no one to ask"}, nil
	case err != nil:
		return ElicitAnswer{}, err
	case !ok:
		return ElicitAnswer{Answer: elicit.Answer{Action: elicit.Decline}}, nil
	}
	return ElicitAnswer{Answer: elicit.Answer{Action: elicit.Accept}}, nil
}
