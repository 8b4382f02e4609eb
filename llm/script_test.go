package llm

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

func loadTestScript(t *testing.T, name string) *Script {
	t.Helper()
	s, err := LoadScript(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScriptSessionReplay(t *testing.T) {
	s := loadTestScript(t, "session.toml")
	msgs := []fsm.Message{{Role: fsm.RoleUser, Content: "What is in go.mod?"}}

	// 1: the scripted 429.
	e := lastErr(t, run(t, s, Request{ID: 1, Messages: msgs}))
	want := fsm.LlmError{Request: 1, Kind: fsm.ErrorRateLimited, StatusCode: 429, Retryable: true,
		RetryAfter: 2 * time.Second, Message: "Rate limit reached: retry in 2s"}
	if e != want {
		t.Errorf("step 1 = %+v\nwant %+v", e, want)
	}

	// 2: the retry gets text and a tool call in three deltas.
	evs := run(t, s, Request{ID: 2, Messages: msgs})
	if got := text(evs); got != "Let me read it." {
		t.Errorf("text %q", got)
	}
	var args []string
	for _, ev := range evs {
		if d, ok := ev.(fsm.LlmToolCallDelta); ok {
			args = append(args, d.ArgumentsDelta)
			if d.Request != 2 || d.Index != 0 {
				t.Errorf("delta %+v", d)
			}
		}
	}
	if len(args) != 3 || strings.Join(args, "") != `{"path":"go.mod"}` {
		t.Errorf("argument deltas %q", args)
	}
	c := completed(t, evs)
	wantCalls := []fsm.ToolCall{{ID: "call_read_1", Name: "read_file", Arguments: `{"path":"go.mod"}`}}
	if !reflect.DeepEqual(c.ToolCalls, wantCalls) || c.FinishReason != "tool_calls" ||
		c.Usage != (fsm.Usage{PromptTokens: 120, CompletionTokens: 20, TotalTokens: 140}) {
		t.Errorf("completed %+v", c)
	}

	// 3: the answer, matched on the tool result.
	msgs = append(msgs,
		fsm.Message{Role: fsm.RoleAssistant, Content: "Let me read it.", ToolCalls: wantCalls},
		fsm.Message{Role: fsm.RoleTool, ToolCallID: "call_read_1", Content: "module example.com/demo\n"})
	evs = run(t, s, Request{ID: 3, Messages: msgs})
	if got := text(evs); got != "It declares the module `example.com/demo`." {
		t.Errorf("text %q", got)
	}
	if c := completed(t, evs); c.FinishReason != "stop" || c.ToolCalls != nil || c.Usage.TotalTokens != 172 {
		t.Errorf("completed %+v", c)
	}
	if u := s.Unplayed(); len(u) != 0 {
		t.Errorf("unplayed steps %q", u)
	}

	// 4: nothing left: a clear, non-retryable error.
	e = lastErr(t, run(t, s, Request{ID: 4, Messages: msgs}))
	if e.Retryable || e.Request != 4 || !strings.Contains(e.Message, `script "read-go-mod"`) ||
		!strings.Contains(e.Message, "module example.com/demo") {
		t.Errorf("unmatched = %+v", e)
	}
}

func TestScriptErrors(t *testing.T) {
	s := loadTestScript(t, "errors.toml")
	tests := []struct {
		prompt    string
		kind      fsm.ErrorKind
		retryable bool
		text      string
	}{
		{"auth please", fsm.ErrorAuth, false, ""},
		{"context please", fsm.ErrorContextLength, false, ""},
		{"midstream please", fsm.ErrorServer, true, "partial"},
	}
	for _, tt := range tests {
		evs := run(t, s, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: tt.prompt}}})
		e := lastErr(t, evs)
		if e.Kind != tt.kind || e.Retryable != tt.retryable || text(evs) != tt.text {
			t.Errorf("%s: %+v, text %q", tt.prompt, e, text(evs))
		}
	}
	e := lastErr(t, run(t, s, Request{ID: 9, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hello"}}}))
	if e.Kind != fsm.ErrorOther || e.Retryable || !strings.Contains(e.Message, `user "hello"`) {
		t.Errorf("unmatched = %+v", e)
	}
}

func TestScriptCancelDuringPacing(t *testing.T) {
	s := loadTestScript(t, "errors.toml")
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	var evs []fsm.Event
	go func() {
		defer close(returned)
		s.Stream(ctx, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "slow"}}},
			func(ev fsm.Event) { evs = append(evs, ev) })
	}()
	cancel()
	select {
	case <-returned:
	case <-time.After(time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if len(evs) != 0 {
		t.Errorf("events after cancel: %#v", evs)
	}
}

func TestScriptConcurrentUse(t *testing.T) {
	var steps []Step
	for i := 0; i < 16; i++ {
		steps = append(steps, Step{Text: []string{"a", "b"}, Pace: time.Microsecond,
			ToolCalls: []ScriptToolCall{{Name: "t", Chunks: []string{"{", "}"}}}})
	}
	s, err := NewScript("shared", steps...)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range 16 {
		wg.Go(func() {
			var c fsm.LlmCompleted
			s.Stream(context.Background(), simpleReq(uint64(i)), func(ev fsm.Event) {
				if cc, ok := ev.(fsm.LlmCompleted); ok {
					c = cc
				}
			})
			if len(c.ToolCalls) == 1 {
				ids[i] = c.ToolCalls[0].ID
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			t.Fatalf("each step must answer exactly one request: ids %q", ids)
		}
		seen[id] = true
	}
	if u := s.Unplayed(); len(u) != 0 {
		t.Errorf("unplayed %q", u)
	}
}

func TestParseScriptRejects(t *testing.T) {
	for name, src := range map[string]string{
		"unknown key":  "[[step]]\ntxt = [\"a\"]\n",
		"bad match":    "[[step]]\nmatch.last_usr_contains = \"a\"\n",
		"bad duration": "[[step]]\npace = \"fast\"\n",
		"no steps":     "name = \"x\"\n",
		"no tool name": "[[step]]\n[[step.tool_call]]\narguments = \"{}\"\n",
		"bad role":     "[[step]]\nmatch.last_role = \"robot\"\n",
		"empty error":  "[[step]]\nerror = { message = \"x\" }\n",
		"not toml":     "[[step]\n",
	} {
		if _, err := ParseScript([]byte(src)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLoadScriptFSAndMatchKeys(t *testing.T) {
	fsys := fstest.MapFS{"demo/play.toml": {Data: []byte(`
[[step]]
match.has_tool = "bash"
match.last_message_contains = "run"
repeat = true
text = ["ok"]
`)}}
	s, err := LoadScriptFS(fsys, "demo/play.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "play" {
		t.Errorf("name %q", s.Name())
	}
	req := Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "run it"}},
		Tools: []ToolSchema{{Name: "bash"}}}
	for range 2 { // repeat = true
		if got := text(run(t, s, req)); got != "ok" {
			t.Errorf("text %q", got)
		}
	}
	req.Tools = nil
	if e := lastErr(t, run(t, s, req)); e.Retryable {
		t.Errorf("%+v", e)
	}
}

func TestSplitN(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcdefg", 3, []string{"abc", "de", "fg"}},
		{"ab", 5, []string{"a", "b"}},
		{"", 3, []string{""}},
		{"héé", 2, []string{"hé", "é"}},
	} {
		if got := splitN(tt.s, tt.n); !reflect.DeepEqual(got, tt.want) || strings.Join(got, "") != tt.s {
			t.Errorf("splitN(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestScriptPacing(t *testing.T) {
	s, err := NewScript("paced", Step{Pace: 20 * time.Millisecond, Text: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs := run(t, s, simpleReq(1))
	// Three gaps: a-b, b-c, c-completed.
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Errorf("paced stream took %s, want >= 60ms", el)
	}
	if text(evs) != "abc" {
		t.Errorf("text %q", text(evs))
	}
}

// TestScriptReasoningAndUsage: a step's reasoning streams first, as
// LlmReasoningDelta, and its usage reports cached and reasoning tokens
// only when the script gives them.
func TestScriptReasoningAndUsage(t *testing.T) {
	s, err := ParseScript([]byte(`
[[step]]
match.last_user_contains = "think"
reasoning = ["Hmm, ", "easy."]
text = ["42"]
usage = { prompt = 9, completion = 4, cached = 8, reasoning = 3 }

[[step]]
text = ["plain"]
usage = { prompt = 2, completion = 1 }
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, prompt := range []string{"think", "other"} {
		for _, ev := range run(t, s, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: prompt}}}) {
			got = append(got, ev.Describe())
		}
	}
	want := []string{
		`LlmReasoningDelta req=1 "Hmm, "`, `LlmReasoningDelta req=1 "easy."`, `LlmTextDelta req=1 "42"`,
		`LlmCompleted req=1 calls=[] usage=9/4/13 cached=8 reasoning=3 finish="stop"`,
		`LlmTextDelta req=1 "plain"`, `LlmCompleted req=1 calls=[] usage=2/1/3 finish="stop"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
