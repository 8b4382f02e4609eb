package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// subagentStates are the loom/subagent notifications of child, in order.
func subagentStates(msgs []fakeeditor.Message, child string) []SubagentParams {
	var out []SubagentParams
	for _, m := range msgs {
		var p SubagentParams
		if m.Method == MethodSubagent && json.Unmarshal(m.Params, &p) == nil && p.Child == child {
			out = append(out, p)
		}
	}
	return out
}

// subagentIn is met once child was said to be in state.
func subagentIn(child, state string) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		for _, p := range subagentStates(msgs, child) {
			if p.State == state {
				return true
			}
		}
		return false
	}
}

// A loom client sees each child as loom/subagent: started (agent, task,
// its conversation id), waiting while its approval is asked, its last
// activity, done with its tokens. loom.stopSubagent stops one child —
// the other finished, the parent's turn goes on and its model reads that
// the user stopped it.
func TestSubagentNotificationsAndStop(t *testing.T) {
	script := `
[[step]]
match.last_user_contains = "delegate"
  [[step.tool_call]]
  id = "w1"
  name = "agent"
  arguments = '{"agent":"worker","task":"wait forever"}'
  [[step.tool_call]]
  id = "w2"
  name = "agent"
  arguments = '{"agent":"worker","task":"run the tests"}'

[[step]]
match.last_user_contains = "wait forever"
delay = "10m"
text = ["never"]

[[step]]
match.last_user_contains = "run the tests"
usage = { prompt = 10, completion = 5, total = 15 }
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"touch ran"}'

[[step]]
match.last_tool_result_contains = "denied"
usage = { prompt = 20, completion = 5, total = 25 }
text = ["I could not run them."]

[[step]]
match.last_role = "tool"
text = ["The parent goes on."]
`
	e := newEnv(t, envOptions{
		script:  script,
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks: fakeeditor.Hooks{RawShowMessageRequest: func(json.RawMessage) any {
			return nil // dismissed: denied
		}},
	})
	asked := e.ask("delegate it")
	e.await("1-w2 done", subagentIn("1-w2", SubagentDone))
	e.await("1-w1 running", subagentIn("1-w1", SubagentRunning))

	err := e.ed.ExecuteCommand(e.ctx, CmdStopSubagent, StopSubagentArgs{Conversation: asked.Conversation, Child: "1-w9"}, nil)
	var rpcErr *jsonrpc2.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc2.InvalidParams {
		t.Errorf("stopping a child that does not run: %v, want invalid params", err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStopSubagent, StopSubagentArgs{Conversation: asked.Conversation, Child: "1-w1"}, nil); err != nil {
		t.Fatalf("%s: %v", CmdStopSubagent, err)
	}
	e.await("1-w1 stopped", subagentIn("1-w1", SubagentStopped))
	e.await("the parent's answer", containsText(asked.Folder, "The parent goes on."))
	e.await("the parent's turn done", hasMethod(MethodTurnEnded, `"outcome":"done"`))
	e.await("the model read that the user stopped it", hasMethod(MethodToolCall, "the subagent was stopped: the user stopped it"))

	msgs := e.ed.Messages(MethodSubagent)
	w2 := subagentStates(msgs, "1-w2")
	var states []string
	for _, p := range w2 {
		if p.Conversation != asked.Conversation || p.CallID != "w2" || p.Agent != "worker" || p.Task != "run the tests" || p.ChildConversation == "" || p.ChildConversation == asked.Conversation {
			t.Errorf("1-w2: %+v", p)
		}
		if len(states) == 0 || states[len(states)-1] != p.State {
			states = append(states, p.State)
		}
	}
	if got := strings.Join(states, " "); got != "running waiting running done" {
		t.Errorf("1-w2's states: %s", got)
	}
	waited := false
	for _, p := range w2 {
		waited = waited || p.State == SubagentWaiting && strings.Contains(p.Activity, "waits for your approval: bash")
	}
	if !waited {
		t.Errorf("1-w2 never said what it waits for: %+v", w2)
	}
	if last := w2[len(w2)-1]; last.Tokens != 40 {
		t.Errorf("1-w2 ended with %d tokens, want 40", last.Tokens)
	}
	for _, p := range subagentStates(msgs, "1-w1") {
		if p.State == SubagentDone || p.State == SubagentFailed {
			t.Errorf("the stopped child said %s", p.State)
		}
	}

	// A client that reloads redraws the children from loom.history:
	// their states, tokens and transcripts.
	var h HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{Conversation: asked.Conversation}, &h); err != nil {
		t.Fatal(err)
	}
	kids := map[string]SubagentHistory{}
	for _, k := range h.Children {
		kids[k.Child] = k
	}
	w1, w2h := kids["1-w1"], kids["1-w2"]
	if len(h.Children) != 2 || w1.State != SubagentStopped || w2h.State != SubagentDone || w2h.Tokens != 40 || w2h.Task != "run the tests" ||
		w2h.ChildConversation != w2[0].ChildConversation || w2h.Conversation != asked.Conversation {
		t.Fatalf("loom.history's children: %+v", h.Children)
	}
	said := ""
	for _, m := range w2h.Messages {
		said += m.Role + ":" + m.Content + " "
	}
	if !strings.Contains(said, "user:run the tests") || !strings.Contains(said, "assistant:I could not run them.") {
		t.Errorf("1-w2's transcript in loom.history: %s", said)
	}
}
