package fsm

import (
	"fmt"
	"testing"
)

// TestDisplaySlabActionsAreValues streams several slabs' worth of deltas,
// keeps every action returned, and checks that each still reads back as
// the DisplayMessage it was when returned: later steps never change an
// earlier action, and an append by the caller never reaches the slab.
func TestDisplaySlabActionsAreValues(t *testing.T) {
	m := New(Config{})
	if _, err := m.Step(UserInput{Text: "go"}); err != nil {
		t.Fatal(err)
	}
	req := m.State().Request
	const n = 3*displaySlabSize + 5
	var got [][]Action
	for i := range n {
		acts, err := m.Step(LlmTextDelta{Request: req, Text: fmt.Sprintf("c%d ", i)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, acts)
	}
	for i, acts := range got {
		want := DisplayMessage{Turn: m.State().Turn, Text: fmt.Sprintf("c%d ", i)}
		if len(acts) != 1 || cap(acts) != 1 {
			t.Fatalf("step %d: %d actions, capacity %d; want one, capacity 1", i, len(acts), cap(acts))
		}
		a, ok := acts[0].(*DisplayMessage)
		if !ok {
			t.Fatalf("step %d: %T, want *DisplayMessage", i, acts[0])
		}
		if *a != want {
			t.Fatalf("step %d: %+v, want %+v", i, *a, want)
		}
		if d := acts[0].Describe(); d != want.Describe() {
			t.Fatalf("step %d: describes as %q, want %q", i, d, want.Describe())
		}
	}
	// An append by the caller must not reach into the slab.
	extended := append(got[0], Shutdown{})
	if *got[1][0].(*DisplayMessage) != (DisplayMessage{Turn: m.State().Turn, Text: "c1 "}) || len(extended) != 2 {
		t.Fatal("appending to a returned slice changed the next action")
	}
}

// TestTextDeltaStepDoesNotAllocate guards issue 16 item 3: a streamed
// text chunk costs the machine no allocation (the slab's and the partial
// text's growth are amortised to zero per step).
func TestTextDeltaStepDoesNotAllocate(t *testing.T) {
	m := New(Config{})
	if _, err := m.Step(UserInput{Text: "go"}); err != nil {
		t.Fatal(err)
	}
	var ev Event = LlmTextDelta{Request: m.State().Request, Text: "chunk "}
	allocs := testing.AllocsPerRun(5000, func() {
		if _, err := m.Step(ev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per LlmTextDelta step, want 0", allocs)
	}
}
