package fsm

import (
	"strings"
	"testing"
)

// Models reuse call ids: two responses of one turn may both call the
// agent tool as s0. Each of the children they start has an id of its own
// (its journal, its stops and its approvals are its own), and replaying
// the events gives the same ids.
func TestChildIDsUniqueWhenCallIDsRepeat(t *testing.T) {
	cfg := Config{Tools: map[string]ToolSpec{AgentTool: {}}}
	m := New(cfg)
	var log []Event
	step := func(ev Event) []Action {
		t.Helper()
		acts, err := m.Step(ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.Describe(), err)
		}
		log = append(log, ev)
		return acts
	}
	started := func(acts []Action) []string {
		var ids []string
		for _, a := range acts {
			if s, ok := a.(StartChild); ok {
				ids = append(ids, s.Child)
			}
		}
		return ids
	}
	call := []ToolCall{{ID: "s0", Name: AgentTool, Arguments: `{"agent":"worker","task":"t"}`}}
	var ids []string
	step(UserInput{Text: "go"})
	for range 3 { // three responses of turn 1, each calling s0
		step(LlmCompleted{Request: m.State().Request, ToolCalls: call})
		ids = append(ids, started(step(SpawnRequested{Turn: 1, CallID: "s0", Agent: "worker", Task: "t"}))...)
		step(ChildFinished{Turn: 1, CallID: "s0", Result: "done"})
	}
	step(LlmTextDelta{Request: m.State().Request, Text: "done"})
	step(LlmCompleted{Request: m.State().Request})
	step(UserInput{Text: "again"}) // a new turn: s0 again
	step(LlmCompleted{Request: m.State().Request, ToolCalls: call})
	ids = append(ids, started(step(SpawnRequested{Turn: 2, CallID: "s0", Agent: "worker", Task: "t"}))...)

	if len(ids) != 4 {
		t.Fatalf("started %v, want 4 children", ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("child id %s given twice: %v", id, ids)
		}
		seen[id] = true
	}
	if ids[0] != "1-s0" || ids[3] != "2-s0" {
		t.Errorf("ids %v: a turn's first child for a call is turn-call", ids)
	}
	replay := New(cfg)
	var again []string
	for _, ev := range log {
		acts, err := replay.Step(ev)
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, started(acts)...)
	}
	if strings.Join(again, " ") != strings.Join(ids, " ") {
		t.Fatalf("replay gave ids %v, the run %v", again, ids)
	}
}
