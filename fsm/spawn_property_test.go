package fsm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The subagents' caps hold whatever the events: never more children
// running than MaxRunning nor started in a turn than MaxPerTurn; a child
// is stopped at most once; every child starts one level deeper and
// read-only under a read-only parent; none is left running once the
// turn is over; a child's answer reaches the model bounded; and a depth
// at the cap never starts one.
func TestSpawnCapsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		caps := SpawnCaps{
			MaxDepth:          rapid.IntRange(-1, 2).Draw(t, "maxDepth"),
			MaxRunning:        rapid.IntRange(1, 3).Draw(t, "maxRunning"),
			MaxPerTurn:        rapid.IntRange(1, 4).Draw(t, "maxPerTurn"),
			MaxTokensPerChild: int64(rapid.IntRange(1, 200).Draw(t, "childTokens")),
			MaxTokensPerTurn:  int64(rapid.IntRange(1, 400).Draw(t, "turnTokens")),
			MaxWallTime:       time.Minute,
			MaxResultBytes:    rapid.IntRange(1, 12).Draw(t, "resultBytes"),
		}
		cfg := Config{
			Tools:     propertyTools,
			Depth:     rapid.IntRange(0, 2).Draw(t, "depth"),
			ReadOnly:  rapid.Bool().Draw(t, "readOnly"),
			Subagents: caps,
		}
		m := New(cfg)
		gen := eventGen{m}
		caps = caps.withDefaults()     // MaxDepth 0 is the default, 1
		stopped := map[string]int{}    // by child id
		childOf := map[string]string{} // call id -> its child's id
		given := map[string]bool{}     // child ids given
		var log []Event
		var trace strings.Builder
		t.Repeat(map[string]func(*rapid.T){
			"step": func(t *rapid.T) {
				var ev Event
				switch {
				case rapid.IntRange(0, 2).Draw(t, "child") == 0:
					ev = gen.draw(t)
				case m.State().Kind == CallingLlm:
					// A response that calls the agent tool several times.
					n := rapid.IntRange(1, 5).Draw(t, "nagents")
					calls := make([]ToolCall, n)
					for i := range calls {
						calls[i] = ToolCall{ID: fmt.Sprintf("s%d", i), Name: AgentTool, Arguments: `{"agent":"worker","task":"t"}`}
					}
					ev = LlmCompleted{Request: m.State().Request, ToolCalls: calls}
				default:
					ev = gen.childEvent(t)
					for _, x := range m.State().Executions {
						if x.Call.Name == AgentTool && x.Status == ExecPending && rapid.Bool().Draw(t, "spawnPending") {
							ev = SpawnRequested{Turn: m.State().Turn, CallID: x.Call.ID, Agent: "worker", Task: "t"}
							break
						}
					}
				}
				readOnly := m.Mode().ReadOnly()
				acts, err := m.Step(ev)
				log = append(log, ev)
				trace.WriteString(stepRecord(acts, err, m.State()))
				for _, a := range acts {
					switch a := a.(type) {
					case StartChild:
						// A later response of the same turn may reuse a call id
						// (the generator's s0, s1, … per response; some models
						// do too): its child still has an id of its own.
						if given[a.Child] {
							t.Fatalf("child id %s given twice", a.Child)
						}
						given[a.Child], childOf[a.CallID] = true, a.Child
						if cfg.Depth >= caps.MaxDepth || caps.MaxDepth < 0 {
							t.Fatalf("a child started at depth %d with the cap at %d", cfg.Depth, caps.MaxDepth)
						}
						if a.Depth != cfg.Depth+1 {
							t.Fatalf("child depth %d, parent %d", a.Depth, cfg.Depth)
						}
						if readOnly && !a.ReadOnly {
							t.Fatalf("a read-only parent started a writing child")
						}
						if a.TokenBudget > caps.MaxTokensPerChild {
							t.Fatalf("budget %d over the cap %d", a.TokenBudget, caps.MaxTokensPerChild)
						}
					case StopChild:
						stopped[childOf[a.CallID]]++
						if stopped[childOf[a.CallID]] > 1 {
							t.Fatalf("child %s stopped twice", a.CallID)
						}
					}
				}
			},
			"": func(t *rapid.T) {
				running, started, _ := m.Children()
				if len(running) > caps.MaxRunning {
					t.Fatalf("%d children running, cap %d", len(running), caps.MaxRunning)
				}
				if started > caps.MaxPerTurn {
					t.Fatalf("%d children started this turn, cap %d", started, caps.MaxPerTurn)
				}
				if s := m.State(); s.Kind != ExecutingTools && len(running) > 0 {
					t.Fatalf("%d children running in %s", len(running), s.Kind)
				}
				if !m.Mode().ReadOnly() && cfg.ReadOnly {
					t.Fatalf("a read-only conversation left read-only mode")
				}
				for _, msg := range m.Messages() {
					if msg.Role == RoleTool && strings.Contains(msg.Content, "found it") && len(msg.Content) > caps.MaxResultBytes+200 {
						t.Fatalf("a child's answer of %d bytes reached the model", len(msg.Content))
					}
				}
			},
		})
		replay := New(cfg)
		var again strings.Builder
		for _, ev := range log {
			acts, err := replay.Step(ev)
			again.WriteString(stepRecord(acts, err, replay.State()))
		}
		if again.String() != trace.String() {
			t.Fatalf("replay differs from the original run")
		}
	})
}
