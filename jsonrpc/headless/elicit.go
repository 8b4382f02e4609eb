package headless

import (
	"context"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Answers to an MCP server's question (Options.Elicit, exec --elicit).
const (
	// ElicitDecline declines every question (the default).
	ElicitDecline = "decline"
	// ElicitDefaults accepts a form with its defaults when every
	// required field has one; anything else is declined.
	ElicitDefaults = "defaults"
)

// Elicit implements workspace.Elicitor: exec cannot ask, so it answers as
// --elicit says, and says so (an info line / event naming the server,
// its question and the answer).
func (h *Editor) Elicit(_ context.Context, q workspace.Elicitation) (workspace.ElicitAnswer, error) {
	r := q.Request
	ans := workspace.ElicitAnswer{Answer: elicit.Answer{Action: elicit.Decline}, Why: "exec --elicit decline"}
	if h.opts.Elicit == ElicitDefaults {
		ans.Why = "exec --elicit defaults"
		switch _, missing := r.Defaults(); {
		case r.Mode == elicit.ModeURL:
			ans.Why += ": exec cannot have a page opened"
		case len(missing) > 0:
			ans.Why += ": required without a default: " + strings.Join(missing, ", ")
		default:
			ans.Action = elicit.Accept
		}
	}
	what := "its form"
	if r.Mode == elicit.ModeURL {
		what = "to open " + r.URL
	}
	verdict := map[string]string{elicit.Accept: "accepted with the defaults", elicit.Decline: "declined"}[ans.Action]
	h.mu.Lock()
	h.show(workspace.InfoReported{NoteSource: workspace.NoteSource{Turn: q.Turn}, Text: fmt.Sprintf(
		"MCP server %s asked %q (%s): %s (%s; --elicit defaults accepts a form's defaults)", r.Server, r.Message, what, verdict, ans.Why)})
	h.mu.Unlock()
	return ans, nil
}
