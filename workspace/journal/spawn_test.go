package journal

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The subagents' events are journaled and read back as they were: a
// replayed parent shows its children's results without running them.
func TestSpawnEventsRoundTrip(t *testing.T) {
	for _, ev := range []fsm.Event{
		fsm.SpawnRequested{Turn: 2, CallID: "a1", Agent: "researcher", Task: "find it", ReadOnly: true},
		fsm.ChildUsage{Turn: 2, CallID: "a1", Tokens: 120},
		fsm.ChildTimedOut{Turn: 2, CallID: "a1"},
		fsm.ChildStopAsked{Turn: 2, CallID: "a1"},
		fsm.ChildFinished{Turn: 2, CallID: "a1", Result: "it is in a.go", Failed: true, Usage: fsm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
	} {
		tag := Tag(ev)
		if tag == "" {
			t.Fatalf("%T has no tag", ev)
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEvent(tag, raw)
		if err != nil || !reflect.DeepEqual(back, ev) {
			t.Fatalf("%s: got %#v, %v; want %#v", tag, back, err, ev)
		}
	}
}
