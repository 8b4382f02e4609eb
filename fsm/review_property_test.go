package fsm

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestReviewProperties drives the machine through review and rewind
// sequences (proposals, decisions, cancels, rewinds and redos in any
// interleaving) and checks that every request keeps the tool-call
// pairing, that no proposal outlives its batch, that a rewound
// conversation is a prefix of the one before and redo gives it back, and
// that replaying the log gives the same output.
func TestReviewProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := Config{Tools: map[string]ToolSpec{"edit_file": {Mutating: true}, "bash": {Mutating: true}, "read_file": {}}, ReviewEdits: true,
			MaxIterations: 8, SystemPrompt: rapid.SampledFrom([]string{"", "sys"}).Draw(t, "system")}
		m := New(cfg)
		var log []Event
		var trace strings.Builder
		callSeq := 0
		liveCalls := func() []string {
			var ids []string
			for _, x := range m.State().Executions {
				if x.Status != ExecCompleted {
					ids = append(ids, x.Call.ID)
				}
			}
			return append(ids, "gone")
		}
		draw := func(t *rapid.T) Event {
			s := m.State()
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0:
				return UserInput{Text: rapid.SampledFrom([]string{"one", "two", "three"}).Draw(t, "text")}
			case 1:
				n := rapid.IntRange(0, 3).Draw(t, "ncalls")
				ev := LlmCompleted{Request: s.Request}
				for i := 0; i < n; i++ {
					callSeq++
					name := rapid.SampledFrom([]string{"edit_file", "edit_file", "bash", "read_file"}).Draw(t, "name")
					ev.ToolCalls = append(ev.ToolCalls, ToolCall{ID: fmt.Sprintf("c%d", callSeq), Name: name, Arguments: "{}"})
				}
				return ev
			case 2, 3:
				hunks := []Hunk{{ID: "1"}}
				if rapid.Bool().Draw(t, "two") {
					hunks = append(hunks, Hunk{ID: "2", StartLine: 5, EndLine: 6})
				}
				if rapid.Bool().Draw(t, "command") {
					// A command's changes, with its output.
					return ChangesProposed{Turn: s.Turn, CallID: rapid.SampledFrom(liveCalls()).Draw(t, "call"),
						Changes: []FileChange{{Path: "gen.go", Kind: ChangeCommand, Hunks: hunks}}, Output: "exit 0"}
				}
				return ChangesProposed{Turn: s.Turn, CallID: rapid.SampledFrom(liveCalls()).Draw(t, "call"),
					Changes: []FileChange{{Path: "a.go", Kind: ChangeEdit, Hunks: hunks}}}
			case 4, 5:
				ids := append(m.PendingProposals(), "1.gone")
				acc := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"1", "2"}), 0, 2, rapid.ID[string]).Draw(t, "acc")
				return ChangesDecided{ID: rapid.SampledFrom(ids).Draw(t, "pid"), Accepted: acc, Comment: "why"}
			case 6:
				return ToolCompleted{Turn: s.Turn, CallID: rapid.SampledFrom(liveCalls()).Draw(t, "done"), Result: "applied"}
			case 7:
				return PostToolsHookCompleted{Turn: s.Turn, ActionTaken: "committed"}
			case 8:
				if rapid.Bool().Draw(t, "cancel") {
					return Cancel{}
				}
				return Redo{}
			default:
				turns := []uint64{s.Turn + 1}
				for _, c := range m.Checkpoints() {
					turns = append(turns, c.Turn)
				}
				return Rewind{Turn: rapid.SampledFrom(turns).Draw(t, "rturn"),
					Restore: rapid.SampledFrom([]Restore{RestoreFiles, RestoreConversation, RestoreBoth}).Draw(t, "restore"),
					Left:    rapid.SliceOfN(rapid.SampledFrom([]string{"a.go", "b.go"}), 0, 2).Draw(t, "left")}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"step": func(t *rapid.T) {
				ev := draw(t)
				before := m.Messages()
				acts, err := m.Step(ev)
				log = append(log, ev)
				trace.WriteString(stepRecord(acts, err, m.State()))
				if err != nil {
					return
				}
				for _, a := range acts {
					if r, ok := a.(SendLlmRequest); ok {
						if err := CheckPairing(r.Messages); err != nil {
							t.Fatalf("request %d breaks pairing: %v", r.Request, err)
						}
					}
				}
				if _, ok := ev.(Rewind); ok {
					after := m.Messages()
					if len(after) > len(before) {
						t.Fatalf("a rewind made the conversation longer: %d -> %d", len(before), len(after))
					}
					for i := range after {
						if after[i].Content != before[i].Content || after[i].Role != before[i].Role {
							t.Fatalf("a rewind changed message %d", i)
						}
					}
				}
			},
			"": func(t *rapid.T) {
				s := m.State()
				if s.Kind == WaitingForUserInput {
					if err := CheckPairing(m.Messages()); err != nil {
						t.Fatalf("conversation breaks pairing while waiting: %v", err)
					}
				}
				reviewing := 0
				for _, x := range s.Executions {
					if x.Status == ExecReviewing {
						reviewing++
					}
				}
				if reviewing != len(m.PendingProposals()) {
					t.Fatalf("%d calls reviewing, %d proposals pending", reviewing, len(m.PendingProposals()))
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
		if describeHistory(replay.Messages()) != describeHistory(m.Messages()) {
			t.Fatalf("replayed conversation differs")
		}
	})
}

// TestRedoRestoresConversation: rewinding the conversation and redoing
// gives back exactly the conversation before, for any turn.
func TestRedoRestoresConversation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New(Config{Tools: map[string]ToolSpec{"edit_file": {Mutating: true}}})
		turns := rapid.IntRange(1, 5).Draw(t, "turns")
		for i := 1; i <= turns; i++ {
			stepOK(t, m, UserInput{Text: fmt.Sprintf("turn %d", i)})
			req := m.State().Request
			stepOK(t, m, LlmTextDelta{Request: req, Text: "ok"})
			stepOK(t, m, LlmCompleted{Request: req})
		}
		want := describeHistory(m.Messages())
		target := uint64(rapid.IntRange(1, turns).Draw(t, "target"))
		acts := stepOK(t, m, Rewind{Turn: target, Restore: RestoreBoth})
		if got := Describe(acts); !strings.Contains(got, fmt.Sprintf("prompt=\"turn %d\"", target)) {
			t.Fatalf("rewind to %d gave %s", target, got)
		}
		if n := len(m.Checkpoints()); n != int(target)-1 {
			t.Fatalf("%d checkpoints after rewinding to turn %d", n, target)
		}
		stepOK(t, m, Redo{})
		if got := describeHistory(m.Messages()); got != want {
			t.Fatalf("redo gave\n%s\nwant\n%s", got, want)
		}
	})
}

func stepOK(t *rapid.T, m *Machine, ev Event) []Action {
	acts, err := m.Step(ev)
	if err != nil {
		t.Fatalf("%s: %v", ev.Describe(), err)
	}
	return acts
}

// TestRewindNoteNamesLeftFiles: a files rewind that left files as they
// were tells the model which, ahead of its next request.
func TestRewindNoteNamesLeftFiles(t *testing.T) {
	m := New(Config{SystemPrompt: "sys", MaxIterations: 5})
	step := func(ev Event) []Action {
		acts, err := m.Step(ev)
		if err != nil {
			t.Fatal(err)
		}
		return acts
	}
	step(UserInput{Text: "one"})
	step(LlmTextDelta{Request: 1, Text: "done"})
	step(LlmCompleted{Request: 1})
	step(Rewind{Turn: 1, Restore: RestoreFiles, Left: []string{"b.txt"}})
	var notes []string
	for _, a := range step(UserInput{Text: "two"}) {
		if r, ok := a.(SendLlmRequest); ok {
			for _, msg := range r.Messages {
				if strings.HasPrefix(msg.Content, "[loom] the user restored") {
					notes = append(notes, msg.Content)
				}
			}
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "except in b.txt, left as it is") {
		t.Fatalf("the model is not told b.txt was left: %q", notes)
	}
}
