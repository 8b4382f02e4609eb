package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// v2Script: read a.txt, edit it (a diff), run a command (asks), answer.
const v2Script = `
[[step]]
match.last_user_contains = "start"
match.last_role = "user"
text = ["Reading ", "it."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "alpha"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"alpha","new_string":"beta"}'

[[step]]
match.last_tool_result_contains = "a.txt"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo ran >> marker.txt"}'

[[step]]
match.last_user_contains = "cancel me"
match.last_role = "user"
  [[step.tool_call]]
  id = "b2"
  name = "bash"
  arguments = '{"command":"echo again >> marker.txt"}'

[[step]]
match.last_role = "tool"
repeat = true
text = ["finished"]

[[step]]
match.last_user_contains = "again"
repeat = true
text = ["still here"]
`

// rawClient is an ACP v2 client over the real wire: the Go SDK speaks
// v1 only, so it writes and reads the JSON lines itself. It records
// every message the agent wrote, in wire order, and answers permission
// requests with permit (nil: never answers).
type rawClient struct {
	t      *testing.T
	in     io.WriteCloser
	served chan struct{}
	state  string // the agent's state directory

	mu     sync.Mutex
	cond   *sync.Cond
	lines  []map[string]json.RawMessage
	nextID int
	permit func(params map[string]json.RawMessage) string // option id; "" leaves it unanswered
}

// startV2 runs Serve on pipes with a rawClient; stateDir "" makes one.
func startV2(t *testing.T, script, stateDir string) *rawClient {
	t.Helper()
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	c := &rawClient{t: t, in: toAgent, served: make(chan struct{}), state: stateDir}
	c.cond = sync.NewCond(&c.mu)
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() {
		defer close(c.served)
		Serve(context.Background(), agentIn, agentOut, Options{
			Host:    workspace.HostOptions{StateDir: stateDir, Config: agentConfig(script, nil), Getenv: func(string) string { return "" }},
			Version: "test",
			Logger:  logger,
		})
		agentOut.Close()
	}()
	go c.read(fromAgent)
	t.Cleanup(func() {
		toAgent.Close()
		select {
		case <-c.served:
		case <-time.After(15 * time.Second):
			t.Errorf("the agent did not stop after stdin closed")
		}
	})
	return c
}

func (c *rawClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			c.t.Errorf("the agent wrote a line that is not JSON: %s", sc.Text())
			continue
		}
		c.mu.Lock()
		c.lines = append(c.lines, m)
		permit := c.permit
		c.cond.Broadcast()
		c.mu.Unlock()
		if method(m) == "session/request_permission" && permit != nil {
			var params map[string]json.RawMessage
			_ = json.Unmarshal(m["params"], &params)
			if option := permit(params); option != "" {
				c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, m["id"], option))
			}
		}
	}
	c.mu.Lock()
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *rawClient) send(line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Errorf("write to the agent: %v", err)
	}
}

func method(m map[string]json.RawMessage) string {
	var s string
	_ = json.Unmarshal(m["method"], &s)
	return s
}

// call sends a request and returns its result or error, and the index
// of the response in the wire order.
func (c *rawClient) call(m string, params any) (json.RawMessage, *stateError, int) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	p, _ := json.Marshal(params)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, m, p))
	var resp map[string]json.RawMessage
	at := c.await(m+" answered", func(lines []map[string]json.RawMessage) bool {
		for _, l := range lines {
			if string(l["id"]) == fmt.Sprint(id) && l["method"] == nil {
				resp = l
				return true
			}
		}
		return false
	})
	if resp["error"] != nil {
		var e stateError
		_ = json.Unmarshal(resp["error"], &e)
		return nil, &e, at
	}
	return resp["result"], nil, at
}

// mustCall is call that fails the test on an error.
func (c *rawClient) mustCall(m string, params any, result any) int {
	c.t.Helper()
	r, e, at := c.call(m, params)
	if e != nil {
		c.t.Fatalf("%s: %d %s\nwire:\n%s", m, e.Code, e.Message, c.describe())
	}
	if result != nil {
		if err := json.Unmarshal(r, result); err != nil {
			c.t.Fatalf("%s result %s: %v", m, r, err)
		}
	}
	return at
}

// await waits (60 s) until cond holds for the lines so far; it returns
// how many lines there were then.
func (c *rawClient) await(what string, cond func([]map[string]json.RawMessage) bool) int {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	stop := time.AfterFunc(60*time.Second, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer stop.Stop()
	c.mu.Lock()
	for !cond(c.lines) {
		if time.Now().After(deadline) {
			c.mu.Unlock()
			c.t.Fatalf("timed out waiting for %s; wire:\n%s", what, c.describe())
		}
		c.cond.Wait()
	}
	n := len(c.lines)
	c.mu.Unlock()
	return n
}

// updates are the session updates of session id in wire order (from
// line from on), each as its update object.
func updates(lines []map[string]json.RawMessage, id string, from int) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	for _, l := range lines[min(from, len(lines)):] {
		if method(l) != "session/update" {
			continue
		}
		var p struct {
			SessionID string                     `json:"sessionId"`
			Update    map[string]json.RawMessage `json:"update"`
		}
		if json.Unmarshal(l["params"], &p) == nil && p.SessionID == id {
			out = append(out, p.Update)
		}
	}
	return out
}

// str is a JSON string member's value.
func str(m map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(m[k], &s)
	return s
}

// states are the state_update states (with stopReason) among us.
func states(us []map[string]json.RawMessage) []string {
	var out []string
	for _, u := range us {
		if str(u, "sessionUpdate") == "state_update" {
			s := str(u, "state")
			if r := str(u, "stopReason"); r != "" {
				s += ":" + r
			}
			out = append(out, s)
		}
	}
	return out
}

func (c *rawClient) snapshot() []map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

// describe is the wire so far, one line each.
func (c *rawClient) describe() string {
	var b strings.Builder
	for _, l := range c.snapshot() {
		line, _ := json.Marshal(l)
		b.WriteString("  " + string(line[:min(len(line), 300)]) + "\n")
	}
	return b.String()
}

// idle reports whether the updates of session id from line from include
// an idle state_update.
func idleIn(id string, from int) func([]map[string]json.RawMessage) bool {
	return func(lines []map[string]json.RawMessage) bool {
		return slices.ContainsFunc(states(updates(lines, id, from)), func(s string) bool { return strings.HasPrefix(s, "idle") })
	}
}

type v2Session struct {
	SessionID     string                       `json:"sessionId"`
	ConfigOptions []map[string]json.RawMessage `json:"configOptions"`
}

// TestV2Session: a v2 client, over the real wire, end to end: initialize
// negotiates 2 and answers in v2's shape; session/new gives config
// options by configId (no modes, no models); session/prompt answers
// {messageId} at once, the prompt is echoed as user_message, and the
// turn reports running → requires_action (the command's permission
// request, v2's title and subject) → running → idle end_turn, with
// every chunk under a messageId, tool calls as upserted
// tool_call_update and the edit as a v2 diff; session/cancel ends a
// turn waiting for the user idle cancelled; a v1 client served beside
// it at the same time sees v1. Then a fresh process resumes the session
// with replayFrom start (history replayed, state_update before the
// response), without replayFrom (no replay), refuses an unknown
// cursor (-32602), and session/load is no v2 method (-32601).
func TestV2Session(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	script := writeScript(t, v2Script)
	c := startV2(t, script, "")
	var init struct {
		ProtocolVersion   int             `json:"protocolVersion"`
		Info              map[string]any  `json:"info"`
		Capabilities      map[string]any  `json:"capabilities"`
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	}
	c.mustCall("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "v2-test", "version": "1"}, "capabilities": map[string]any{}}, &init)
	if init.ProtocolVersion != 2 || init.Info["name"] != "loom-lsp" || init.Capabilities["session"] == nil || init.AgentCapabilities != nil {
		t.Fatalf("initialize answered %+v", init)
	}

	// A v1 client of the same process code, at the same time.
	v1 := start(t, script, "", nil)
	if got := v1.initialize(true, true); got.ProtocolVersion != 1 || got.AgentInfo == nil {
		t.Fatalf("v1 initialize answered %+v", got)
	}
	v1id := v1.newSession(repo(t, map[string]string{"x.txt": "x\n"}))

	var s v2Session
	c.mustCall("session/new", map[string]any{"cwd": dir}, &s)
	if s.SessionID == "" || len(s.ConfigOptions) == 0 || s.ConfigOptions[0]["configId"] == nil || s.ConfigOptions[0]["id"] != nil {
		t.Fatalf("session/new answered %+v", s)
	}
	c.mu.Lock()
	c.permit = func(p map[string]json.RawMessage) string {
		var subject map[string]json.RawMessage
		_ = json.Unmarshal(p["subject"], &subject)
		if str(p, "title") == "" || str(subject, "type") != "tool_call" || p["toolCall"] != nil {
			t.Errorf("permission request not in v2's shape: %v", p)
		}
		return optionAllowOnce
	}
	c.mu.Unlock()
	var accepted promptAccepted
	from := len(c.snapshot())
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "start"}}}, &accepted)
	if accepted.MessageID == "" {
		t.Fatalf("session/prompt answered no messageId")
	}
	c.await("the turn idle", idleIn(s.SessionID, from))
	us := updates(c.snapshot(), s.SessionID, from)
	if got, want := states(us), []string{"running", "requires_action", "running", "idle:end_turn"}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v\nwire:\n%s", got, want, c.describe())
	}
	// The echo comes before the turn's first update (what the session
	// queued before the prompt, a usage_update, may come earlier).
	echo := slices.IndexFunc(us, func(u map[string]json.RawMessage) bool { return str(u, "sessionUpdate") == "user_message" })
	turn := slices.IndexFunc(us, func(u map[string]json.RawMessage) bool {
		k := str(u, "sessionUpdate")
		return k == "state_update" || k == "agent_message_chunk" || k == "tool_call_update"
	})
	if echo < 0 || echo > turn || str(us[echo], "messageId") != accepted.MessageID {
		t.Errorf("the prompt's user_message %q is not before the turn's updates (at %d, the turn at %d)", accepted.MessageID, echo, turn)
	}
	diffs := 0
	for _, u := range us {
		switch kind := str(u, "sessionUpdate"); kind {
		case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
			if str(u, "messageId") == "" {
				t.Errorf("%s without messageId: %v", kind, u)
			}
		case "tool_call_update":
			if strings.Contains(string(u["content"]), `"type":"diff"`) {
				diffs++
				if !strings.Contains(string(u["content"]), `"operation":"modify"`) || !strings.Contains(string(u["content"]), `+beta`) {
					t.Errorf("diff not in v2's shape: %s", u["content"])
				}
			}
		case "user_message", "state_update", "usage_update", "session_info_update", "available_commands_update", "config_option_update", "plan_update":
		default:
			t.Errorf("update %q is no v2 update loom sends", kind)
		}
	}
	if diffs == 0 {
		t.Errorf("no diff in the tool calls:\n%s", c.describe())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "beta\n" {
		t.Errorf("a.txt = %q, %v (no fs methods in v2: the agent writes the disk)", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	// The v1 client, meanwhile, is answered in v1.
	v1.mustPrompt(v1id, "again", acpsdk.StopReasonEndTurn)

	// Cancel while a permission request waits for the user.
	c.mu.Lock()
	c.permit = func(map[string]json.RawMessage) string { return "" }
	c.mu.Unlock()
	from = len(c.snapshot())
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "cancel me"}}}, &accepted)
	c.await("the permission request", func(lines []map[string]json.RawMessage) bool {
		return slices.ContainsFunc(lines[from:], func(l map[string]json.RawMessage) bool { return method(l) == "session/request_permission" })
	})
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, s.SessionID))
	c.await("the cancelled turn idle", idleIn(s.SessionID, from))
	if got := states(updates(c.snapshot(), s.SessionID, from)); got[len(got)-1] != "idle:cancelled" || !slices.Contains(got, "requires_action") {
		t.Errorf("states %v, want requires_action … idle:cancelled", got)
	}
	state := c.state
	c.in.Close()
	<-c.served

	// A fresh process resumes it.
	r := startV2(t, script, state)
	r.mustCall("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "v2-test", "version": "1"}}, nil)
	if _, e, _ := r.call("session/load", map[string]any{"sessionId": s.SessionID, "cwd": dir, "mcpServers": []any{}}); e == nil || e.Code != -32601 {
		t.Errorf("session/load on v2: %+v, want -32601", e)
	}
	if _, e, _ := r.call("session/resume", map[string]any{"sessionId": s.SessionID, "cwd": dir, "replayFrom": map[string]any{"type": "lastMessage"}}); e == nil || e.Code != -32602 {
		t.Errorf("replayFrom lastMessage: %+v, want -32602", e)
	}
	from = len(r.snapshot())
	var resumed map[string]json.RawMessage
	at := r.mustCall("session/resume", map[string]any{"sessionId": s.SessionID, "cwd": dir, "replayFrom": map[string]any{"type": "start"}}, &resumed)
	before := updates(r.snapshot()[:at], s.SessionID, from)
	if got := states(before); !slices.Equal(got, []string{"idle"}) {
		t.Errorf("states before the resume response %v, want [idle]", got)
	}
	replayed := ""
	for _, u := range before {
		if k := str(u, "sessionUpdate"); k == "user_message_chunk" || k == "agent_message_chunk" {
			if str(u, "messageId") == "" {
				t.Errorf("replayed %s without messageId", k)
			}
			replayed += string(u["content"])
		}
	}
	if !strings.Contains(replayed, "start") || !strings.Contains(replayed, "finished") {
		t.Errorf("the replay lacks the prompt or the answer:\n%s", r.describe())
	}
	if resumed["configOptions"] == nil || resumed["modes"] != nil || resumed["models"] != nil {
		t.Errorf("session/resume answered %v", resumed)
	}
	// Without replayFrom: no history, the state still before the response.
	from = len(r.snapshot())
	at = r.mustCall("session/resume", map[string]any{"sessionId": s.SessionID, "cwd": dir}, nil)
	before = updates(r.snapshot()[:at], s.SessionID, from)
	if got := states(before); !slices.Equal(got, []string{"idle"}) || slices.ContainsFunc(before, func(u map[string]json.RawMessage) bool {
		return str(u, "sessionUpdate") == "user_message_chunk"
	}) {
		t.Errorf("resume without replayFrom sent %v before its response", before)
	}
}
