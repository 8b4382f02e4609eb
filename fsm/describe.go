package fsm

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Describe returns the canonical text of an event, an action, a state or a
// list of actions: stable, deterministic, one line per item. Anything else
// is formatted with %v.
func Describe(v any) string {
	switch x := v.(type) {
	case Event:
		return x.Describe()
	case Action:
		return x.Describe()
	case State:
		return x.Describe()
	case []Action:
		lines := make([]string, len(x))
		for i, a := range x {
			lines[i] = a.Describe()
		}
		return strings.Join(lines, "\n")
	default:
		return fmt.Sprintf("%v", v)
	}
}

// describeLimit bounds the quoted text in a description, in runes.
const describeLimit = 80

// quote quotes s, cut to describeLimit runes with a note of what was cut.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= describeLimit {
		return strconv.Quote(s)
	}
	i, n := 0, 0
	for i = range s {
		if n == describeLimit {
			break
		}
		n++
	}
	return strconv.Quote(s[:i]) + fmt.Sprintf("…(+%d bytes)", len(s)-i)
}

func describeCalls(calls []ToolCall, mutating []bool) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range calls {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.ID)
		b.WriteByte(' ')
		b.WriteString(c.Name)
		if i < len(mutating) && mutating[i] {
			b.WriteString("(mutating)")
		}
		if c.Arguments != "" {
			b.WriteByte(' ')
			b.WriteString(quote(c.Arguments))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func okOrError(isError bool) string {
	if isError {
		return "error"
	}
	return "ok"
}

// Describe implements [Event].
func (e UserInput) Describe() string {
	s := "UserInput " + quote(e.Text) + describeImages(e.Images)
	if e.HookContext != "" {
		s += " hookContext=" + quote(e.HookContext)
	}
	if e.Refused != "" {
		s += " refused=" + quote(e.Refused)
	}
	return s
}

// Describe implements [Event].
func (e LlmTextDelta) Describe() string {
	return fmt.Sprintf("LlmTextDelta req=%d %s", e.Request, quote(e.Text))
}

// Describe implements [Event].
func (e LlmToolCallDelta) Describe() string {
	return fmt.Sprintf("LlmToolCallDelta req=%d index=%d id=%q name=%q args=%s",
		e.Request, e.Index, e.ID, e.Name, quote(e.ArgumentsDelta))
}

// Describe implements [Event].
func (e LlmCompleted) Describe() string {
	return fmt.Sprintf("LlmCompleted req=%d calls=%s usage=%s finish=%q",
		e.Request, describeCalls(e.ToolCalls, nil), describeUsage(e.Usage), e.FinishReason)
}

// Describe implements [Event].
func (e LlmError) Describe() string {
	s := fmt.Sprintf("LlmError req=%d kind=%s status=%d", e.Request, e.Kind, e.StatusCode)
	if e.Retryable {
		s += " retryable"
	}
	if e.RetryAfter > 0 {
		s += " retry-after=" + e.RetryAfter.String()
	}
	return s + " " + quote(e.Message)
}

// Describe implements [Event].
func (e ToolProgress) Describe() string {
	return fmt.Sprintf("ToolProgress turn=%d call=%s %s", e.Turn, e.CallID, quote(e.Message))
}

// Describe implements [Event].
func (e ToolCompleted) Describe() string {
	d := fmt.Sprintf("ToolCompleted turn=%d call=%s %s %s", e.Turn, e.CallID, okOrError(e.IsError), quote(e.Result))
	if len(e.Read) > 0 {
		d += " read=" + strings.Join(e.Read, ",")
	}
	return d
}

// Describe implements [Event].
func (e PostToolsHookCompleted) Describe() string {
	if e.Note != "" {
		return fmt.Sprintf("PostToolsHookCompleted turn=%d %s %s note=%s", e.Turn, okOrError(e.Failed), quote(e.ActionTaken), quote(e.Note))
	}
	return fmt.Sprintf("PostToolsHookCompleted turn=%d %s %s", e.Turn, okOrError(e.Failed), quote(e.ActionTaken))
}

// Describe implements [Event].
func (e RetryTimeoutFired) Describe() string {
	return fmt.Sprintf("RetryTimeoutFired req=%d", e.Request)
}

// Describe implements [Event].
func (Cancel) Describe() string { return "Cancel" }

// Describe implements [Event].
func (ShutdownRequested) Describe() string { return "ShutdownRequested" }

// Describe implements [Action]. It names the last message only, so that
// describing a request costs the same at any history length.
func (a SendLlmRequest) Describe() string {
	s := fmt.Sprintf("SendLlmRequest turn=%d req=%d iter=%d msgs=%d", a.Turn, a.Request, a.Iteration, len(a.Messages))
	if a.Compaction {
		s += " compaction"
	}
	if a.Model != "" {
		s += " model=" + a.Model
	}
	if a.Effort != "" {
		s += " effort=" + a.Effort
	}
	if n := len(a.Messages); n > 0 {
		last := a.Messages[n-1]
		s += " last=" + string(last.Role)
		if last.ToolCallID != "" {
			s += "(" + last.ToolCallID + ")"
		}
		s += ":" + quote(last.Content) + describeImages(last.Images)
	}
	return s
}

// Describe implements [Action].
func (a ExecuteTools) Describe() string {
	s := fmt.Sprintf("ExecuteTools turn=%d calls=%s", a.Turn, describeCalls(a.Calls, a.Mutating))
	if a.Review {
		s += " review"
	}
	if a.ReadOnly {
		s += " read-only"
	}
	return s
}

// Describe implements [Action].
func (a RunPostToolsHook) Describe() string {
	return fmt.Sprintf("RunPostToolsHook turn=%d calls=%s", a.Turn, describeCalls(a.Calls, nil))
}

// Describe implements [Action].
func (a DisplayMessage) Describe() string {
	return fmt.Sprintf("DisplayMessage turn=%d %s", a.Turn, quote(a.Text))
}

// Describe implements [Action].
func (a DisplayToolCall) Describe() string {
	s := fmt.Sprintf("DisplayToolCall turn=%d call=%s name=%s status=%s", a.Turn, a.CallID, a.Name, a.Status)
	if a.Detail != "" {
		s += " " + quote(a.Detail)
	}
	if a.Arguments != "" {
		s += " args=" + quote(a.Arguments)
	}
	return s
}

// Describe implements [Action].
func (a DisplayError) Describe() string {
	return fmt.Sprintf("DisplayError turn=%d kind=%s %s", a.Turn, a.Kind, quote(a.Message))
}

// Describe implements [Action].
func (a ScheduleRetry) Describe() string {
	return fmt.Sprintf("ScheduleRetry turn=%d req=%d attempt=%d delay=%s kind=%s %s", a.Turn, a.Request, a.Attempt, a.Delay, a.Kind, quote(a.Reason))
}

// Describe implements [Action].
func (a CancelInFlight) Describe() string { return fmt.Sprintf("CancelInFlight turn=%d", a.Turn) }

// Describe implements [Action].
func (a WaitForInput) Describe() string {
	return fmt.Sprintf("WaitForInput turn=%d outcome=%s usage=%s", a.Turn, a.Outcome, describeUsage(a.Usage))
}

// Describe implements [Action].
func (Shutdown) Describe() string { return "Shutdown" }

// Describe returns the state's canonical one-line text.
func (s State) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s turn=%d req=%d iter=%d retries=%d queued=%d msgs=%d",
		s.Kind, s.Turn, s.Request, s.Iteration, s.Retries, s.Queued, s.Messages)
	if s.Compacting {
		b.WriteString(" compacting")
	}
	if s.Redo > 0 {
		fmt.Fprintf(&b, " redo=%d", s.Redo)
	}
	if s.Mode != "" && s.Mode != ModeAgent {
		fmt.Fprintf(&b, " mode=%s", s.Mode)
	}
	if s.LastError != nil {
		fmt.Fprintf(&b, " error=%s", s.LastError.Kind)
	}
	if len(s.Executions) > 0 {
		b.WriteString(" executions=[")
		for i, x := range s.Executions {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s %s %s", x.Call.ID, x.Call.Name, x.Status)
			if x.Status == ExecCompleted {
				b.WriteString("(" + okOrError(x.IsError) + ")")
			}
		}
		b.WriteByte(']')
	}
	return b.String()
}
