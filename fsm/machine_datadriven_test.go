package fsm

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestScripts runs the scripts in testdata/: each directive is one event
// (or "new"/"history"), and its expected output is the Describe of the
// actions, then the state. Regenerate with: go test ./fsm -run TestScripts -rewrite
func TestScripts(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) { runScript(t, path) })
	}
}

func runScript(t *testing.T, path string) {
	var m *Machine
	datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd == "new" {
			m = New(scriptConfig(t, td))
			return m.State().Describe() + "\n"
		}
		if m == nil {
			td.Fatalf(t, "the script must start with 'new'")
		}
		if td.Cmd == "history" {
			return describeHistory(m.Messages())
		}
		if td.Cmd == "usage" {
			// The token usage of the last turn and of the conversation.
			turn, conv := m.Usage()
			return fmt.Sprintf("turn: %s\nconversation: %s\n", describeUsage(turn), describeUsage(conv))
		}
		if td.Cmd == "window" {
			// The window the machine budgets with, and a lowered one.
			n, why := m.CutWindow()
			return fmt.Sprintf("window: %d\ncut: %d %s\n", m.window(), n, quote(why))
		}
		if td.Cmd == "reconfigure" {
			// The arguments of 'new', as a config change (Reconfigure).
			m.Reconfigure(scriptConfig(t, td))
			return "state: " + m.State().Describe() + "\n"
		}
		if td.Cmd == "message" {
			// One message's whole text: message n=<index>.
			a, _ := td.Arg("n")
			return m.Messages()[atoi(t, td, a.Vals[0])].Content + "\n"
		}
		if td.Cmd == "plan" {
			// The todo list and the mode.
			return fmt.Sprintf("mode: %s\nplan: %s\n", m.Mode(), DescribePlan(m.Plan(), "; "))
		}
		if td.Cmd == "turn-start" {
			// Where the current turn begins: the messages a request sends
			// back reasoning and signatures with (SendLlmRequest.TurnStart).
			return fmt.Sprintf("turn-start: %d\n", m.turnStart)
		}
		if td.Cmd == "checkpoints" {
			var b strings.Builder
			for _, c := range m.Checkpoints() {
				fmt.Fprintf(&b, "turn=%d %s", c.Turn, quote(c.Prompt))
				if c.Compacted {
					b.WriteString(" compacted")
				}
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "pending=%v can-redo=%v\n", m.PendingProposals(), m.CanRedo())
			return b.String()
		}
		if td.Cmd == "sent" {
			// What a request sends now (old tool results elided), and its
			// token estimate.
			return describeHistory(m.elided.messages(m.history)) + fmt.Sprintf("tokens: %d\n", m.Tokens())
		}
		if strings.HasPrefix(td.Input, `"`) {
			// A quoted input keeps its leading and trailing spaces.
			in, err := strconv.Unquote(td.Input)
			if err != nil {
				td.Fatalf(t, "bad quoted input: %v", err)
			}
			td.Input = in
		}
		ev := scriptEvent(t, td)
		acts, err := m.Step(ev)
		var b strings.Builder
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		for _, a := range acts {
			b.WriteString(a.Describe())
			b.WriteByte('\n')
		}
		b.WriteString("state: " + m.State().Describe() + "\n")
		return b.String()
	})
}

func scriptConfig(t *testing.T, td *datadriven.TestData) Config {
	cfg := Config{Tools: map[string]ToolSpec{}}
	for _, arg := range td.CmdArgs {
		switch arg.Key {
		case "max-retries":
			cfg.MaxRetries = atoi(t, td, arg.Vals[0])
		case "max-iterations":
			cfg.MaxIterations = atoi(t, td, arg.Vals[0])
		case "retry-base":
			cfg.RetryBase = duration(t, td, arg.Vals[0])
		case "retry-max":
			cfg.RetryMax = duration(t, td, arg.Vals[0])
		case "system":
			cfg.SystemPrompt = arg.Vals[0]
		case "window":
			cfg.ContextWindow = atoi(t, td, arg.Vals[0])
		case "keep-tool-turns":
			cfg.KeepToolTurns = atoi(t, td, arg.Vals[0])
		case "review":
			cfg.ReviewEdits = true
		case "stop-hooks":
			cfg.StopHooks = true
		case "depth":
			cfg.Depth = atoi(t, td, arg.Vals[0])
		case "read-only":
			cfg.ReadOnly = true
		case "max-depth":
			cfg.Subagents.MaxDepth = atoi(t, td, arg.Vals[0])
		case "max-running":
			cfg.Subagents.MaxRunning = atoi(t, td, arg.Vals[0])
		case "max-per-turn":
			cfg.Subagents.MaxPerTurn = atoi(t, td, arg.Vals[0])
		case "child-tokens":
			cfg.Subagents.MaxTokensPerChild = int64(atoi(t, td, arg.Vals[0]))
		case "turn-tokens":
			cfg.Subagents.MaxTokensPerTurn = int64(atoi(t, td, arg.Vals[0]))
		case "child-time":
			cfg.Subagents.MaxWallTime = duration(t, td, arg.Vals[0])
		case "result-bytes":
			cfg.Subagents.MaxResultBytes = atoi(t, td, arg.Vals[0])
		case "continue-from":
			// continue-from=(turn, request)
			cfg.ContinueFrom = IDs{Turn: uint64(atoi(t, td, arg.Vals[0])), Request: uint64(atoi(t, td, arg.Vals[1]))}
		case "tools":
			// tools=(read_file, edit_file!, bash!ro): a trailing ! marks a
			// mutating tool, !ro one that runs read-only in a read-only mode.
			for _, v := range arg.Vals {
				v, ro := strings.CutSuffix(v, "ro")
				name, mutating := strings.CutSuffix(v, "!")
				if ro && !mutating {
					name, ro = name+"ro", false
				}
				cfg.Tools[name] = ToolSpec{Mutating: mutating, RunsReadOnly: ro}
			}
		default:
			td.Fatalf(t, "unknown argument %q", arg.Key)
		}
	}
	return cfg
}

// scriptEvent builds the event of a directive. Free text (deltas, results,
// messages) is the directive's input block.
func scriptEvent(t *testing.T, td *datadriven.TestData) Event {
	arg := func(key string) string {
		a, ok := td.Arg(key)
		if !ok {
			td.Fatalf(t, "%s needs %s=", td.Cmd, key)
		}
		return a.Vals[0]
	}
	optional := func(key string) string {
		if a, ok := td.Arg(key); ok && len(a.Vals) > 0 {
			return a.Vals[0]
		}
		return ""
	}
	u64 := func(key string) uint64 { return uint64(atoi(t, td, arg(key))) }
	switch td.Cmd {
	case "user":
		in := UserInput{Text: td.Input, HookContext: optional("context"), Refused: optional("refused")}
		if a, ok := td.Arg("images"); ok {
			// images=(image/png:hash, …)
			for _, v := range a.Vals {
				mime, hash, _ := strings.Cut(v, ":")
				in.Images = append(in.Images, Image{Hash: hash, MIME: mime, Size: 100})
			}
		}
		return in
	case "text":
		return LlmTextDelta{Request: u64("req"), Text: td.Input}
	case "reasoning":
		return LlmReasoningDelta{Request: u64("req"), Text: td.Input}
	case "call-delta":
		return LlmToolCallDelta{Request: u64("req"), Index: atoi(t, td, arg("index")),
			ID: optional("id"), Name: optional("name"), ArgumentsDelta: td.Input}
	case "completed":
		ev := LlmCompleted{Request: u64("req"), FinishReason: optional("finish"), Reasoning: optional("reasoning")}
		if v := optional("opaque"); v != "" {
			api, data, _ := strings.Cut(v, ":")
			ev.Opaque = Opaque{API: api, Data: data}
		}
		if v := optional("tokens"); v != "" {
			n := int64(atoi(t, td, v))
			ev.Usage = Usage{PromptTokens: n, CompletionTokens: n, TotalTokens: 2 * n}
		}
		if v := optional("prompt-tokens"); v != "" {
			ev.Usage = Usage{PromptTokens: int64(atoi(t, td, v))}
		}
		if v := optional("cached"); v != "" {
			n := int64(atoi(t, td, v))
			ev.Usage.CachedTokens = &n
		}
		if v := optional("reasoning-tokens"); v != "" {
			n := int64(atoi(t, td, v))
			ev.Usage.ReasoningTokens = &n
		}
		// Each input line is a call: "<id> <name> <arguments…>".
		for _, line := range strings.Split(td.Input, "\n") {
			if line == "" {
				continue
			}
			f := strings.SplitN(line, " ", 3)
			c := ToolCall{ID: f[0]}
			if c.ID == "-" {
				c.ID = ""
			}
			if len(f) > 1 {
				c.Name = f[1]
			}
			if len(f) > 2 {
				c.Arguments = f[2]
			}
			// A call's thought signature follows its arguments: " sig=<s>".
			if a, sig, ok := strings.Cut(c.Arguments, " sig="); ok {
				c.Arguments, c.Signature = a, sig
			}
			ev.ToolCalls = append(ev.ToolCalls, c)
		}
		return ev
	case "llm-error":
		ev := LlmError{Request: u64("req"), Kind: ErrorKind(arg("kind")), Retryable: td.HasArg("retryable"), Message: td.Input}
		if v := optional("status"); v != "" {
			ev.StatusCode = atoi(t, td, v)
		}
		if v := optional("retry-after"); v != "" {
			ev.RetryAfter = duration(t, td, v)
		}
		return ev
	case "progress":
		return ToolProgress{Turn: u64("turn"), CallID: arg("call"), Message: td.Input}
	case "elicited":
		// values=name:value,name:value are the shown values; the input is
		// the server's message.
		ev := Elicited{Turn: u64("turn"), CallID: arg("call"), Server: arg("server"), Mode: arg("mode"),
			Action: arg("action"), Message: td.Input, URL: optional("url"), Why: optional("why")}
		if v := optional("values"); v != "" {
			for _, nv := range strings.Split(v, ",") {
				n, val, _ := strings.Cut(nv, ":")
				ev.Values = append(ev.Values, ElicitedValue{Name: n, Value: val})
			}
		}
		return ev
	case "tool-done":
		result := td.Input
		if v := optional("size"); v != "" {
			// size=N: a result of N bytes, the input repeated.
			result = strings.Repeat(result+" ", atoi(t, td, v))[:atoi(t, td, v)]
		}
		var read []string
		if v := optional("read"); v != "" {
			// read=a.txt,b.txt: the files the call read afresh.
			read = strings.Split(v, ",")
		}
		return ToolCompleted{Turn: u64("turn"), CallID: arg("call"), Result: result, IsError: td.HasArg("error"), Read: read}
	case "hook-done":
		// With note, the input's first line is the action, the rest the
		// note for the model.
		action, note := td.Input, ""
		if td.HasArg("note") {
			action, note, _ = strings.Cut(td.Input, "\n")
		}
		return PostToolsHookCompleted{Turn: u64("turn"), ActionTaken: action, Failed: td.HasArg("failed"), Note: note}
	case "retry-fired":
		return RetryTimeoutFired{Request: u64("req")}
	case "files-changed":
		// Each input line is a path.
		return FilesChanged{Paths: strings.Fields(td.Input)}
	case "cancel":
		return Cancel{}
	case "reset":
		return Reset{}
	case "select-model":
		return SelectModel{Model: strings.TrimSpace(td.Input)}
	case "select-effort":
		return SelectEffort{Effort: strings.TrimSpace(td.Input)}
	case "load":
		return Load{ID: arg("id")}
	case "compact":
		return Compact{}
	case "drop-queued":
		return DropQueued{}
	case "advance-ids":
		return AdvanceIDs{IDs: IDs{Turn: u64("turn"), Request: u64("req")}}
	case "approval":
		ev := ApprovalDecided{Turn: u64("turn"), CallID: arg("call"), Approved: td.HasArg("approved")}
		if a, ok := td.Arg("why"); ok {
			ev.Why = strings.Join(a.Vals, ", ")
		}
		return ev
	case "propose":
		// Each input line is a file: "<kind> <path> <hunk>@<start>-<end>…".
		ev := ChangesProposed{Turn: u64("turn"), CallID: arg("call")}
		if a, ok := td.Arg("output"); ok {
			ev.Output = strings.Join(a.Vals, " ")
		}
		for _, line := range strings.Split(td.Input, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			c := FileChange{Kind: ChangeKind(f[0]), Path: f[1], Diff: "diff " + f[1]}
			for _, h := range f[2:] {
				id, span, _ := strings.Cut(h, "@")
				a, b, _ := strings.Cut(span, "-")
				c.Hunks = append(c.Hunks, Hunk{ID: id, Diff: "@@ " + id, StartLine: atoi(t, td, a), EndLine: atoi(t, td, b)})
			}
			ev.Changes = append(ev.Changes, c)
		}
		return ev
	case "decide":
		// decide id=… accept=(1,2) reject=(3); the input is the comment.
		ev := ChangesDecided{ID: arg("id"), Comment: td.Input}
		if a, ok := td.Arg("unreviewed"); ok {
			ev.Unreviewed, ev.Comment = strings.Join(a.Vals, " "), ""
			if td.Input != "" {
				ev.Unreviewed = td.Input
			}
		}
		if a, ok := td.Arg("accept"); ok {
			ev.Accepted = a.Vals
		}
		if a, ok := td.Arg("reject"); ok {
			ev.Rejected = a.Vals
		}
		return ev
	case "rewind":
		ev := Rewind{Turn: u64("turn"), Restore: Restore(arg("restore"))}
		if a, ok := td.Arg("left"); ok {
			ev.Left = a.Vals
		}
		return ev
	case "redo":
		return Redo{}
	case "set-mode":
		return SetMode{Mode: Mode(strings.TrimSpace(td.Input))}
	case "plan-decided":
		// plan-decided turn=… call=… accept|reject [fresh] [edited]; the
		// input is the comment (reject) or, with edited, the plan.
		ev := PlanDecided{Turn: u64("turn"), CallID: arg("call"), Decision: PlanReject, Fresh: td.HasArg("fresh")}
		if td.HasArg("accept") {
			ev.Decision = PlanAccept
		}
		if td.HasArg("edited") {
			ev.Plan = td.Input
		} else {
			ev.Comment = td.Input
		}
		return ev
	case "hooks":
		// hooks turn=… event=… [call=…]; each input line is a report:
		// "hook | decision | reason | context | stop|problem=…|input=…|quiet".
		ev := HooksDecided{Turn: u64("turn"), Event: arg("event"), CallID: optional("call")}
		for _, line := range strings.Split(td.Input, "\n") {
			f := strings.Split(line, "|")
			for len(f) < 5 {
				f = append(f, "")
			}
			for i := range f {
				f[i] = strings.TrimSpace(f[i])
			}
			r := HookReport{Hook: f[0], Decision: f[1], Reason: f[2], Context: f[3], StopTurn: f[4] == "stop"}
			if p, ok := strings.CutPrefix(f[4], "problem="); ok {
				r.Problem = p
			}
			if p, ok := strings.CutPrefix(f[4], "input="); ok {
				r.Input = p
			}
			r.Quiet = f[4] == "quiet"
			ev.Hooks = append(ev.Hooks, r)
		}
		return ev
	case "shutdown":
		return ShutdownRequested{}
	case "spawn":
		// spawn turn=… call=… agent=… [read-only]; the input is the task.
		return SpawnRequested{Turn: u64("turn"), CallID: arg("call"), Agent: arg("agent"), Task: td.Input, ReadOnly: td.HasArg("read-only")}
	case "child-usage":
		return ChildUsage{Turn: u64("turn"), CallID: arg("call"), Tokens: int64(atoi(t, td, arg("tokens")))}
	case "child-timeout":
		return ChildTimedOut{Turn: u64("turn"), CallID: arg("call")}
	case "child-stop":
		return ChildStopAsked{Turn: u64("turn"), CallID: arg("call")}
	case "child-done":
		// child-done turn=… call=… [tokens=N] [failed]; the input is the
		// child's answer.
		ev := ChildFinished{Turn: u64("turn"), CallID: arg("call"), Result: td.Input, Failed: td.HasArg("failed")}
		if v := optional("tokens"); v != "" {
			n := int64(atoi(t, td, v))
			ev.Usage = Usage{PromptTokens: n / 2, CompletionTokens: n - n/2, TotalTokens: n}
		}
		return ev
	}
	td.Fatalf(t, "unknown directive %q", td.Cmd)
	return nil
}

func describeHistory(msgs []Message) string {
	var b strings.Builder
	for i, msg := range msgs {
		fmt.Fprintf(&b, "%d %s", i, msg.Role)
		if msg.ToolCallID != "" {
			fmt.Fprintf(&b, "(%s)", msg.ToolCallID)
		}
		if msg.Note {
			b.WriteString(" note")
		}
		fmt.Fprintf(&b, " %s", quote(msg.Content))
		if len(msg.ToolCalls) > 0 {
			b.WriteString(" calls=" + describeCalls(msg.ToolCalls, nil))
			for _, c := range msg.ToolCalls {
				if c.Signature != "" {
					fmt.Fprintf(&b, " sig(%s)=%s", c.ID, c.Signature)
				}
			}
		}
		if msg.Reasoning != "" {
			b.WriteString(" reasoning=" + quote(msg.Reasoning))
		}
		b.WriteString(describeImages(msg.Images))
		if msg.Opaque != (Opaque{}) {
			b.WriteString(" opaque=" + msg.Opaque.API + ":" + quote(msg.Opaque.Data))
		}
		b.WriteByte('\n')
	}
	if err := CheckPairing(msgs); err != nil {
		fmt.Fprintf(&b, "pairing: %v\n", err)
	} else {
		b.WriteString("pairing: ok\n")
	}
	return b.String()
}

func atoi(t *testing.T, td *datadriven.TestData, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		td.Fatalf(t, "bad number %q: %v", s, err)
	}
	return n
}

func duration(t *testing.T, td *datadriven.TestData, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "bad duration %q: %v", s, err)
	}
	return d
}
