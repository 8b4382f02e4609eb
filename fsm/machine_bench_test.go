package fsm

import (
	"fmt"
	"testing"
)

// machineWithHistory returns a machine waiting for input whose
// conversation holds about n messages (one user and one assistant message
// per turn).
func machineWithHistory(b *testing.B, n int) *Machine {
	m := New(Config{Tools: map[string]ToolSpec{"read_file": {}}, MaxIterations: 1 << 30})
	for len(m.Messages()) < n {
		mustStep(b, m, UserInput{Text: "question"})
		mustStep(b, m, LlmTextDelta{Request: m.State().Request, Text: "answer"})
		mustStep(b, m, LlmCompleted{Request: m.State().Request})
	}
	return m
}

func mustStep(b *testing.B, m *Machine, ev Event) []Action {
	acts, err := m.Step(ev)
	if err != nil {
		b.Fatal(err)
	}
	return acts
}

var historySizes = []int{10, 10_000}

// BenchmarkTextDelta steps one streamed text chunk.
func BenchmarkTextDelta(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			m := machineWithHistory(b, n)
			mustStep(b, m, UserInput{Text: "go"})
			req := m.State().Request
			// The event is boxed once, as the provider boxes each chunk it
			// sends: that allocation is the producer's, not the step's.
			var ev Event = LlmTextDelta{Request: req, Text: "chunk "}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Step(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolRoundTrip steps a full tool round trip: LlmCompleted with
// one call -> ExecuteTools; ToolCompleted -> SendLlmRequest. The history
// is cut back to its starting length after each round (in-package), so
// every round runs at the stated size.
func BenchmarkToolRoundTrip(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			m := machineWithHistory(b, n)
			mustStep(b, m, UserInput{Text: "go"})
			base := len(m.history)
			calls := []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}
			b.ReportAllocs()
			for b.Loop() {
				req := m.State().Request
				if _, err := m.Step(LlmCompleted{Request: req, ToolCalls: calls}); err != nil {
					b.Fatal(err)
				}
				acts, err := m.Step(ToolCompleted{Turn: m.turn, CallID: "c1", Result: "package main"})
				if err != nil || len(acts) != 2 {
					b.Fatalf("round trip: %v %v", acts, err)
				}
				m.history = m.history[:base]
			}
		})
	}
}
