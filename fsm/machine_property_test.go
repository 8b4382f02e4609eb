package fsm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// propertyTools are the tools the property tests declare; "ghost" is
// never declared, so calls to it exercise the unknown-tool path.
var propertyTools = map[string]ToolSpec{"read_file": {}, "grep": {}, "edit_file": {Mutating: true}, "bash": {Mutating: true}, UpdatePlanTool: {}, ProposePlanTool: {}, AgentTool: {}}

// eventGen draws events that are mostly plausible for the machine's
// current state, mixed with stale, future and malformed ones.
type eventGen struct{ m *Machine }

func (g eventGen) request(t *rapid.T) uint64 {
	cur := g.m.State().Request
	return rapid.SampledFrom([]uint64{cur, cur, cur, cur + 1, max(cur, 1) - 1}).Draw(t, "req")
}

func (g eventGen) turn(t *rapid.T) uint64 {
	cur := g.m.State().Turn
	return rapid.SampledFrom([]uint64{cur, cur, cur, cur + 1, max(cur, 1) - 1}).Draw(t, "turn")
}

func (g eventGen) callID(t *rapid.T) string {
	var ids []string
	for _, x := range g.m.State().Executions {
		ids = append(ids, x.Call.ID)
	}
	ids = append(ids, "bogus")
	return rapid.SampledFrom(ids).Draw(t, "call")
}

func (g eventGen) toolCalls(t *rapid.T) []ToolCall {
	n := rapid.IntRange(0, 3).Draw(t, "ncalls")
	calls := make([]ToolCall, n)
	for i := range calls {
		calls[i] = ToolCall{
			ID:        rapid.SampledFrom([]string{"", "a", "b", fmt.Sprintf("c%d", i)}).Draw(t, "id"),
			Name:      rapid.SampledFrom([]string{"read_file", "grep", "edit_file", "bash", "ghost", UpdatePlanTool, ProposePlanTool, AgentTool}).Draw(t, "name"),
			Arguments: rapid.SampledFrom([]string{"", "{}", `{"path":"a"}`, `{"pa`, "[1]", "null", `{"plan":"p"}`, `{"plan":[{"step":"s","status":"pending"}]}`}).Draw(t, "args"),
		}
	}
	return calls
}

func (g eventGen) draw(t *rapid.T) Event {
	switch rapid.IntRange(0, 24).Draw(t, "kind") {
	case 23, 24:
		return g.childEvent(t)
	case 22:
		ev := HooksDecided{Turn: g.turn(t), Event: rapid.SampledFrom([]string{HookPreToolUse, HookPostToolUse, HookStop, HookUserPromptSubmit, HookNotification, "Bogus"}).Draw(t, "hookev"), CallID: g.callID(t)}
		n := rapid.IntRange(0, 2).Draw(t, "nhooks")
		for i := 0; i < n; i++ {
			ev.Hooks = append(ev.Hooks, HookReport{
				Hook:     "h",
				Decision: rapid.SampledFrom([]string{"", "allow", "deny", "ask", "block"}).Draw(t, "hookdec"),
				Reason:   "r", Context: rapid.SampledFrom([]string{"", "c"}).Draw(t, "hookctx"),
				StopTurn: rapid.IntRange(0, 5).Draw(t, "hookstop") == 0,
			})
		}
		return ev
	case 17, 20:
		n := rapid.SampledFrom([]int{0, 1, 1, 2, 3}).Draw(t, "nhunks")
		c := FileChange{Path: rapid.SampledFrom([]string{"a.go", "a.go", "a.go", ""}).Draw(t, "cpath"), Kind: ChangeEdit}
		for i := 1; i <= n; i++ {
			c.Hunks = append(c.Hunks, Hunk{ID: fmt.Sprint(rapid.IntRange(1, i).Draw(t, "hid")), StartLine: i, EndLine: i + 1})
		}
		return ChangesProposed{Turn: g.turn(t), CallID: g.callID(t), Changes: []FileChange{c}}
	case 18, 21:
		pending := g.m.PendingProposals()
		ids := append(append(pending, pending...), "1.bogus", "99.x")
		hunks := rapid.SliceOfN(rapid.SampledFrom([]string{"1", "1", "2", "9"}), 0, 2)
		ev := ChangesDecided{ID: rapid.SampledFrom(ids).Draw(t, "pid"), Accepted: hunks.Draw(t, "acc"), Comment: "c"}
		if rapid.IntRange(0, 3).Draw(t, "withrej") == 0 {
			ev.Rejected = hunks.Draw(t, "rej")
		}
		return ev
	case 19:
		if rapid.IntRange(0, 2).Draw(t, "redo") == 0 {
			return Redo{}
		}
		turns := []uint64{0, 1, 2, 3}
		for _, c := range g.m.Checkpoints() {
			turns = append(turns, c.Turn)
		}
		return Rewind{Turn: rapid.SampledFrom(turns).Draw(t, "rturn"),
			Restore: rapid.SampledFrom([]Restore{RestoreFiles, RestoreConversation, RestoreBoth, "nope"}).Draw(t, "restore")}
	case 0:
		return UserInput{Text: rapid.SampledFrom([]string{"hi", "fix it", "", "  ", "again"}).Draw(t, "text")}
	case 1, 2:
		if rapid.IntRange(0, 3).Draw(t, "reasoning") == 0 {
			return LlmReasoningDelta{Request: g.request(t), Text: reasoningMark + rapid.StringN(0, 3, -1).Draw(t, "thought")}
		}
		return LlmTextDelta{Request: g.request(t), Text: rapid.StringN(0, 5, -1).Draw(t, "delta")}
	case 3:
		return LlmToolCallDelta{Request: g.request(t), Index: rapid.IntRange(-1, 3).Draw(t, "index"),
			ID: rapid.SampledFrom([]string{"", "x"}).Draw(t, "id"), Name: rapid.SampledFrom([]string{"", "grep"}).Draw(t, "name")}
	case 4, 5:
		u := Usage{PromptTokens: 2, CompletionTokens: 1, TotalTokens: 3}
		if rapid.Bool().Draw(t, "cached") {
			n := int64(rapid.IntRange(0, 2).Draw(t, "ncached"))
			u.CachedTokens = &n
		}
		return LlmCompleted{Request: g.request(t), ToolCalls: g.toolCalls(t), Usage: u}
	case 6:
		return LlmError{Request: g.request(t),
			Kind:       rapid.SampledFrom([]ErrorKind{ErrorRateLimited, ErrorServer, ErrorAuth, ErrorContextLength}).Draw(t, "ekind"),
			Retryable:  rapid.Bool().Draw(t, "retryable"),
			RetryAfter: time.Duration(rapid.SampledFrom([]int{0, 2, 3600}).Draw(t, "after")) * time.Second,
			Message:    "boom"}
	case 7:
		if rapid.Bool().Draw(t, "elicited") {
			return Elicited{Turn: g.turn(t), CallID: g.callID(t), Server: "gh", Mode: "form", Message: "Which?",
				Action: rapid.SampledFrom([]string{"accept", "decline", "cancel"}).Draw(t, "eaction")}
		}
		return ToolProgress{Turn: g.turn(t), CallID: g.callID(t), Message: "working"}
	case 8, 9:
		return ToolCompleted{Turn: g.turn(t), CallID: g.callID(t), Result: "result", IsError: rapid.Bool().Draw(t, "iserr")}
	case 10:
		return PostToolsHookCompleted{Turn: g.turn(t), ActionTaken: "committed", Failed: rapid.Bool().Draw(t, "failed"), Note: rapid.SampledFrom([]string{"", "x.go left uncommitted"}).Draw(t, "note")}
	case 11:
		return RetryTimeoutFired{Request: g.request(t)}
	case 12:
		return FilesChanged{Paths: rapid.SliceOfN(rapid.SampledFrom([]string{"a.go", "b.go"}), 0, 2).Draw(t, "paths")}
	case 13:
		if rapid.IntRange(0, 2).Draw(t, "plandecided") == 0 {
			return PlanDecided{Turn: g.turn(t), CallID: g.callID(t), Decision: rapid.SampledFrom([]PlanDecision{PlanAccept, PlanReject, "maybe"}).Draw(t, "decision"),
				Fresh: rapid.Bool().Draw(t, "fresh"), Comment: rapid.SampledFrom([]string{"", "why"}).Draw(t, "pcomment")}
		}
		return ApprovalDecided{Turn: g.turn(t), CallID: g.callID(t), Approved: rapid.Bool().Draw(t, "approved")}
	case 14:
		switch rapid.IntRange(0, 6).Draw(t, "between") {
		case 0:
			return Reset{}
		case 6:
			if rapid.Bool().Draw(t, "mode") {
				return SetMode{Mode: rapid.SampledFrom([]Mode{ModeAgent, ModePlan, ModeAsk, "nope"}).Draw(t, "newmode")}
			}
			if rapid.Bool().Draw(t, "effort") {
				return SelectEffort{Effort: rapid.SampledFrom([]string{"", "low", "high"}).Draw(t, "neweffort")}
			}
			return SelectModel{Model: rapid.SampledFrom([]string{"", "small", "big"}).Draw(t, "model")}
		case 1, 2:
			return Compact{}
		case 3:
			return AdvanceIDs{IDs: IDs{Turn: uint64(rapid.IntRange(0, 20).Draw(t, "advturn")), Request: uint64(rapid.IntRange(0, 20).Draw(t, "advreq"))}}
		}
		return DropQueued{}
	default:
		if rapid.IntRange(0, 9).Draw(t, "shutdown") == 0 {
			return ShutdownRequested{}
		}
		return Cancel{}
	}
}

// childEvent draws an event of the subagents' family.
func (g eventGen) childEvent(t *rapid.T) Event {
	turn, call := g.turn(t), g.callID(t)
	switch rapid.IntRange(0, 4).Draw(t, "childkind") {
	case 0:
		return SpawnRequested{Turn: turn, CallID: call, Agent: "researcher", Task: rapid.SampledFrom([]string{"look", ""}).Draw(t, "task"), ReadOnly: rapid.Bool().Draw(t, "ro")}
	case 1:
		return ChildUsage{Turn: turn, CallID: call, Tokens: int64(rapid.IntRange(0, 300).Draw(t, "ctokens"))}
	case 2:
		return ChildTimedOut{Turn: turn, CallID: call}
	case 3:
		return ChildStopAsked{Turn: turn, CallID: call}
	}
	return ChildFinished{Turn: turn, CallID: call, Result: "found it", Failed: rapid.Bool().Draw(t, "cfailed"), Usage: Usage{PromptTokens: 5, CompletionTokens: 5, TotalTokens: 10}}
}

// reasoningMark starts every reasoning delta the generator draws: no
// message of the conversation may ever contain it.
const reasoningMark = "‹thought›"

// checkNoReasoning fails when a message carries reasoning.
func checkNoReasoning(t *rapid.T, what string, msgs []Message) {
	for i, msg := range msgs {
		if strings.Contains(msg.Content, reasoningMark) {
			t.Fatalf("%s: message %d (%s) carries reasoning: %q", what, i, msg.Role, msg.Content)
		}
	}
}

func lastUser(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// stepRecord is what one Step produced, as text.
func stepRecord(acts []Action, err error, s State) string {
	var b strings.Builder
	if err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	}
	for _, a := range acts {
		b.WriteString(a.Describe() + "\n")
	}
	b.WriteString(s.Describe() + "\n")
	return b.String()
}

func TestMachineProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := Config{
			Tools:      propertyTools,
			MaxRetries: rapid.IntRange(-1, 4).Draw(t, "maxRetries"),
			// Small enough that the guard is reached now and then.
			MaxIterations: rapid.IntRange(1, 6).Draw(t, "maxIterations"),
			Jitter:        0.5,
			// Small windows make the machine compact now and then.
			ContextWindow: rapid.SampledFrom([]int{0, 40, 200}).Draw(t, "window"),
			KeepToolTurns: rapid.IntRange(-1, 2).Draw(t, "keepToolTurns"),
			JitterSeed:    rapid.Uint64().Draw(t, "seed"),
			ReviewEdits:   rapid.Bool().Draw(t, "review"),
			StopHooks:     rapid.Bool().Draw(t, "stopHooks"),
		}
		cfg.SystemPrompt = rapid.SampledFrom([]string{"", "sys"}).Draw(t, "system")
		m := New(cfg)
		gen := eventGen{m}
		maxRetries := m.cfg.MaxRetries
		var (
			log      []Event
			trace    strings.Builder
			accepted []string // inputs the machine took, in order
			started  []string // inputs that started a turn, in order
			lastTurn uint64
			promised []uint64 // the NextTurn of each accepted input
			spent    Usage    // the usage of the accepted LlmCompleted since the last Reset
		)
		t.Repeat(map[string]func(*rapid.T){
			"step": func(t *rapid.T) {
				ev := gen.draw(t)
				before, beforeMsgs := m.State().Describe(), len(m.Messages())
				beforeIDs, next := m.IDs(), m.NextTurn()
				acts, err := m.Step(ev)
				log = append(log, ev)
				trace.WriteString(stepRecord(acts, err, m.State()))
				if errors.Is(err, ErrInternal) {
					t.Fatalf("internal error: %v", err)
				}
				if err != nil {
					if len(acts) != 0 {
						t.Fatalf("error with actions: %v", err)
					}
					if after := m.State().Describe(); after != before || len(m.Messages()) != beforeMsgs {
						t.Fatalf("rejected %s changed the state:\n%s\n%s", ev.Describe(), before, after)
					}
					return
				}
				if ids := m.IDs(); ids.Turn < beforeIDs.Turn || ids.Request < beforeIDs.Request {
					t.Fatalf("%s made the ids go back: %+v -> %+v", ev.Describe(), beforeIDs, ids)
				}
				switch e := ev.(type) {
				case LlmCompleted:
					spent = spent.add(e.Usage)
				case ChildFinished:
					spent = spent.add(e.Usage) // a child's usage rolls up
				case UserInput:
					accepted = append(accepted, e.Text)
					promised = append(promised, next)
				case Reset, DropQueued:
					// The queued inputs are gone; none may start later.
					accepted, promised = accepted[:len(started)], promised[:len(started)]
				}
				for _, a := range acts {
					switch a := a.(type) {
					case SendLlmRequest:
						if err := CheckPairing(a.Messages); err != nil {
							t.Fatalf("request %d breaks tool-call pairing: %v", a.Request, err)
						}
						checkNoReasoning(t, fmt.Sprintf("request %d", a.Request), a.Messages)
						if _, onDemand := ev.(Compact); onDemand && a.Compaction && a.Turn != lastTurn {
							// loom.compact's own turn: no input started it.
							lastTurn = a.Turn
						}
						if a.Turn != lastTurn {
							lastTurn = a.Turn
							input := a.Messages[len(a.Messages)-1].Content
							if a.Compaction {
								// A turn that compacts first: its input is
								// the history's last user message.
								input = lastUser(m.Messages())
							}
							started = append(started, input)
							if want := promised[len(started)-1]; a.Turn != want {
								t.Fatalf("an input promised turn %d started as turn %d", want, a.Turn)
							}
						}
					case ScheduleRetry:
						if a.Attempt > maxRetries {
							t.Fatalf("retry %d exceeds MaxRetries %d", a.Attempt, maxRetries)
						}
					}
				}
				if _, ok := ev.(Reset); ok {
					spent = Usage{}
					if s := m.State(); s.Kind != WaitingForUserInput || s.Queued != 0 || len(m.Messages()) != len(New(cfg).Messages()) {
						t.Fatalf("after Reset: %s with %d messages, want an empty conversation", s.Describe(), len(m.Messages()))
					}
				}
				if _, ok := ev.(ShutdownRequested); ok && m.State().Kind != ShuttingDown {
					t.Fatalf("ShutdownRequested left the machine in %s", m.State().Kind)
				}
			},
			"": func(t *rapid.T) {
				s := m.State()
				checkNoReasoning(t, "the conversation", m.Messages())
				if _, conv := m.Usage(); describeUsage(conv) != describeUsage(spent) {
					t.Fatalf("conversation usage %s, want the sum of the responses %s", describeUsage(conv), describeUsage(spent))
				}
				if err := CheckPairing(m.Messages()); err != nil && s.Kind == WaitingForUserInput {
					t.Fatalf("the conversation breaks pairing while waiting: %v", err)
				}
				for _, id := range m.PendingProposals() {
					if s.Kind != ExecutingTools {
						t.Fatalf("proposal %s pending in %s", id, s.Kind)
					}
				}
				reviewing := 0
				for _, x := range s.Executions {
					if x.Status == ExecReviewing {
						reviewing++
					}
				}
				if reviewing != len(m.PendingProposals()) {
					t.Fatalf("%d calls wait for a review but %d proposals are pending", reviewing, len(m.PendingProposals()))
				}
				if s.Kind == ProcessingLlmResponse {
					t.Fatalf("the transient state is observable")
				}
				if s.Retries > maxRetries {
					t.Fatalf("retries %d > MaxRetries %d", s.Retries, maxRetries)
				}
				if len(started) > len(accepted) {
					t.Fatalf("more turns started (%d) than inputs accepted (%d)", len(started), len(accepted))
				}
				for i := range started {
					if started[i] != accepted[i] {
						t.Fatalf("turn %d started with %q, want %q: the queue lost or reordered input", i+1, started[i], accepted[i])
					}
				}
				if s.Kind != ShuttingDown && len(accepted)-len(started) != s.Queued {
					t.Fatalf("%d inputs accepted, %d started, but %d queued", len(accepted), len(started), s.Queued)
				}
			},
		})
		// Replaying the recorded log into a fresh machine gives the same
		// output, byte for byte.
		replay := New(cfg)
		var again strings.Builder
		for _, ev := range log {
			acts, err := replay.Step(ev)
			again.WriteString(stepRecord(acts, err, replay.State()))
		}
		if again.String() != trace.String() {
			t.Fatalf("replay differs from the original run")
		}
		// Shutdown from wherever the run ended.
		if _, err := m.Step(ShutdownRequested{}); err != nil || m.State().Kind != ShuttingDown {
			t.Fatalf("shutdown from the final state: %v, state %s", err, m.State().Kind)
		}
		if err := CheckPairing(m.Messages()); err != nil {
			t.Fatalf("conversation after shutdown: %v", err)
		}
	})
}
