package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// subagentScript: the parent hands a worker a task; the worker asks to
// run a command (bash is "ask"); denied, it says so; the parent ends.
const subagentScript = `
[[step]]
match.last_user_contains = "delegate"
  [[step.tool_call]]
  id = "w1"
  name = "agent"
  arguments = '{"agent":"worker","task":"run the tests"}'

[[step]]
match.last_user_contains = "run the tests"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"touch ran"}'

[[step]]
match.last_tool_result_contains = "denied"
text = ["I could not run them."]

[[step]]
match.last_role = "tool"
text = ["The worker could not run the tests."]
`

// withSubagentsCapability adds clientCapabilities.subagents = {} to the
// client's initialize request (the SDK's client, v0.13.0, cannot say it).
func withSubagentsCapability(r io.Reader) io.Reader {
	return lineRewriter(r, func(line []byte) []byte {
		if !bytes.Contains(line, []byte(`"method":"initialize"`)) {
			return line
		}
		return bytes.Replace(line, []byte(`"clientCapabilities":{`), []byte(`"clientCapabilities":{"subagents":{},`), 1)
	})
}

// wireLine is what the test reads of a line the agent wrote.
type wireLine struct {
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			SessionID     string `json:"sessionId"`
			Title         string `json:"title"`
			Description   string `json:"description"`
			State         *struct {
				State      string `json:"state"`
				StopReason string `json:"stopReason"`
			} `json:"state"`
		} `json:"update"`
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
		} `json:"toolCall"`
	} `json:"params"`
}

// A client that declared clientCapabilities.subagents sees the child as
// a child session, at the wire bytes: a subagent_update on the parent's
// session announces it (title, the task, running) before any update on
// the child's session id; the child's tool call and its permission
// request are on the child's session; while the request waits the child
// requires_action; the denial reaches the child; at its end the child is
// idle with stopReason end_turn. A client that did not declare it gets
// no subagent_update and the child's permission request on the parent's
// session, on the parent's agent call, named as the child's.
func TestSubagentSessions(t *testing.T) {
	for _, declared := range []bool{true, false} {
		name := "declared"
		if !declared {
			name = "not declared"
		}
		t.Run(name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.go": "package a\n"})
			var wrap func(io.Reader) io.Reader
			if declared {
				wrap = withSubagentsCapability
			}
			h := startWithInput(t, "", agentConfig(writeScript(t, subagentScript), nil), wrap)
			h.initialize(true, true)
			id := h.newSession(dir)
			h.client.permit = func(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
				return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: optionRejectOnce}}}, nil
			}
			h.mustPrompt(id, "delegate it", acpsdk.StopReasonEndTurn)
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Fatal("the denied command ran")
			}
			h.client.mu.Lock()
			lines := append([]string(nil), h.client.lines...)
			h.client.mu.Unlock()
			if declared {
				checkChildSession(t, string(id), lines)
			} else {
				checkNoChildSession(t, string(id), lines)
			}
		})
	}
}

func checkChildSession(t *testing.T, parent string, lines []string) {
	t.Helper()
	var child string
	var states []string
	permissionOn, toolOn := "", ""
	for _, l := range lines {
		var w wireLine
		if json.Unmarshal([]byte(l), &w) != nil {
			continue
		}
		u := w.Params.Update
		switch {
		case w.Method == "session/update" && u.SessionUpdate == "subagent_update":
			if w.Params.SessionID != parent {
				t.Errorf("subagent_update on session %s, want the parent's %s", w.Params.SessionID, parent)
			}
			if child == "" {
				child = u.SessionID
				if u.Title != "worker 1-w1" || u.Description != "run the tests" {
					t.Errorf("the announcement: title %q, description %q", u.Title, u.Description)
				}
			}
			if u.State != nil {
				states = append(states, strings.TrimSpace(u.State.State+" "+u.State.StopReason))
			}
		case w.Method == "session/update" && w.Params.SessionID != parent:
			if child == "" || w.Params.SessionID != child {
				t.Fatalf("an update on session %s before its subagent_update: %s", w.Params.SessionID, l)
			}
			if u.SessionUpdate == "tool_call" {
				toolOn = w.Params.SessionID
			}
		case w.Method == "session/request_permission":
			permissionOn = w.Params.SessionID
		}
	}
	if child == "" || child == parent {
		t.Fatalf("no child session announced:\n%s", strings.Join(lines, "\n"))
	}
	if toolOn != child || permissionOn != child {
		t.Errorf("the child's tool call on %q, its permission request on %q; want the child's session %s", toolOn, permissionOn, child)
	}
	want := "running | requires_action | running | idle end_turn"
	if got := strings.Join(states, " | "); got != want {
		t.Errorf("the child's states: %s\nwant: %s", got, want)
	}
}

func checkNoChildSession(t *testing.T, parent string, lines []string) {
	t.Helper()
	asked := false
	for _, l := range lines {
		var w wireLine
		if json.Unmarshal([]byte(l), &w) != nil {
			continue
		}
		if strings.Contains(l, `"subagent_update"`) {
			t.Fatalf("a subagent_update to a client that did not declare subagents: %s", l)
		}
		if w.Method == "session/update" && w.Params.SessionID != parent {
			t.Fatalf("an update on another session than the parent's: %s", l)
		}
		if w.Method == "session/request_permission" {
			asked = true
			tc := w.Params.ToolCall
			if w.Params.SessionID != parent || tc.ToolCallID != "w1" || !strings.HasPrefix(tc.Title, "subagent worker 1-w1 (task: run the tests): ") {
				t.Errorf("the child's permission request: session %s, call %s, title %q", w.Params.SessionID, tc.ToolCallID, tc.Title)
			}
		}
	}
	if !asked {
		t.Fatal("the child's permission request never reached the client")
	}
}

// awaitLine blocks until a line the agent wrote satisfies ok, and
// returns it, or fails the test after a deadline.
func (c *testClient) awaitLine(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	timer := time.AfterFunc(60*time.Second, func() { c.changed(func() {}) })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for _, l := range c.lines {
			if ok(l) {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s:\n%s", what, strings.Join(c.lines, "\n"))
		}
		c.cond.Wait()
	}
}

// session/cancel on a child session's id stops that child only: it ends
// idle cancelled, the parent's turn goes on (its model reads that the
// user stopped the child) and ends end_turn.
func TestSubagentSessionCancel(t *testing.T) {
	const script = `
[[step]]
match.last_user_contains = "delegate"
  [[step.tool_call]]
  id = "w1"
  name = "agent"
  arguments = '{"agent":"worker","task":"wait forever"}'

[[step]]
match.last_user_contains = "wait forever"
delay = "10m"
text = ["never"]

[[step]]
match.last_tool_result_contains = "the user stopped it"
text = ["The parent goes on."]
`
	dir := repo(t, map[string]string{"a.go": "package a\n"})
	h := startWithInput(t, "", agentConfig(writeScript(t, script), nil), withSubagentsCapability)
	h.initialize(true, true)
	id := h.newSession(dir)
	ch := h.promptAsync(id, "delegate it")
	announced := h.client.awaitLine(t, "the child's announcement", func(l string) bool {
		return strings.Contains(l, `"subagent_update"`) && strings.Contains(l, `"running"`)
	})
	var w wireLine
	if err := json.Unmarshal([]byte(announced), &w); err != nil || w.Params.Update.SessionID == "" {
		t.Fatalf("the announcement %s: %v", announced, err)
	}
	child := w.Params.Update.SessionID
	if err := h.conn.Cancel(testCtx(t), acpsdk.CancelNotification{SessionId: acpsdk.SessionId(child)}); err != nil {
		t.Fatal(err)
	}
	r := h.awaitResult(ch)
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("the parent's prompt answered %+v, %v; want end_turn", r.resp, r.err)
	}
	if !strings.Contains(agentText(h.client.snapshot()), "The parent goes on.") {
		t.Errorf("the parent's answer: %q", agentText(h.client.snapshot()))
	}
	h.client.awaitLine(t, "the child idle cancelled", func(l string) bool {
		return strings.Contains(l, `"subagent_update"`) && strings.Contains(l, `"sessionId":"`+child+`","state":{"state":"idle","stopReason":"cancelled"}`)
	})
}
