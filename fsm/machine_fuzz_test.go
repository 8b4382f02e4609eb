package fsm

import (
	"errors"
	"testing"
	"time"
)

// FuzzStep decodes arbitrary bytes into an event sequence and checks that
// Step never fails internally and never sends a conversation that breaks
// tool-call pairing.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 4, 1, 8, 0, 8, 1})
	f.Add([]byte{0, 6, 1, 11, 0, 3, 12})
	f.Add([]byte{0, 0, 4, 2, 12, 4, 13})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := New(Config{Tools: propertyTools, MaxIterations: 4, MaxRetries: 2})
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		names := []string{"read_file", "edit_file", "bash", "ghost"}
		args := []string{"", "{}", `{"x":1}`, "{", "[]"}
		for len(data) > 0 {
			s := m.State()
			req := s.Request + uint64(next()%3) - 1
			turn := s.Turn + uint64(next()%3) - 1
			callID := "none"
			if n := len(s.Executions); n > 0 {
				callID = s.Executions[int(next())%n].Call.ID
			}
			var ev Event
			switch next() % 17 {
			case 0:
				ev = UserInput{Text: string(rune('a' + next()%26))}
			case 1:
				if next()%2 == 0 {
					ev = LlmReasoningDelta{Request: req, Text: "r"}
				} else {
					ev = LlmTextDelta{Request: req, Text: "t"}
				}
			case 2:
				ev = LlmToolCallDelta{Request: req, Index: int(next()) - 128, Name: "grep"}
			case 3, 4:
				var calls []ToolCall
				for i := 0; i < int(next()%4); i++ {
					calls = append(calls, ToolCall{ID: string(rune('a' + next()%3)), Name: names[next()%4], Arguments: args[next()%5]})
				}
				ev = LlmCompleted{Request: req, ToolCalls: calls}
			case 5:
				ev = LlmError{Request: req, Retryable: next()%2 == 0, RetryAfter: time.Duration(next()) * time.Second}
			case 6:
				ev = ToolProgress{Turn: turn, CallID: callID}
			case 7, 8:
				ev = ToolCompleted{Turn: turn, CallID: callID, IsError: next()%2 == 0}
			case 9:
				ev = PostToolsHookCompleted{Turn: turn, Failed: next()%2 == 0}
			case 10:
				ev = RetryTimeoutFired{Request: req}
			case 11:
				ev = Cancel{}
			case 12:
				ev = ShutdownRequested{}
			case 13:
				ev = ApprovalDecided{Turn: turn, CallID: callID, Approved: next()%2 == 0}
			case 14:
				ev = Reset{}
			case 15:
				ev = DropQueued{}
			default:
				ev = nil
			}
			acts, err := m.Step(ev)
			if errors.Is(err, ErrInternal) {
				t.Fatal(err)
			}
			for _, a := range acts {
				if r, ok := a.(SendLlmRequest); ok {
					if err := CheckPairing(r.Messages); err != nil {
						t.Fatalf("pairing: %v", err)
					}
				}
			}
		}
	})
}
