package journal

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestJournalReplaysReviewAndRewind journals a review (proposal, partial
// accept), a rejected proposal, a rewind and a redo, and checks that the
// replayed machine has the same conversation, checkpoints and redo state.
func TestJournalReplaysReviewAndRewind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "/folder", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg := fsm.Config{Tools: map[string]fsm.ToolSpec{"edit_file": {Mutating: true}}, ReviewEdits: true}
	if err := j.AppendConfig(cfg); err != nil {
		t.Fatal(err)
	}
	m := fsm.New(cfg)
	step := func(ev fsm.Event) {
		t.Helper()
		if _, err := m.Step(ev); err != nil {
			t.Fatalf("%s: %v", ev.Describe(), err)
		}
		if err := j.AppendEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	change := []fsm.FileChange{{Path: "a.go", Kind: fsm.ChangeEdit, Diff: "--- a/a.go\n+++ b/a.go\n", Hunks: []fsm.Hunk{{ID: "1", Diff: "@@ -1 +1 @@\n-a\n+b\n"}, {ID: "2", StartLine: 9, EndLine: 10}}}}
	step(fsm.UserInput{Text: "turn one"})
	step(fsm.LlmCompleted{Request: 1, ToolCalls: []fsm.ToolCall{{ID: "c1", Name: "edit_file", Arguments: "{}"}}})
	step(fsm.ChangesProposed{Turn: 1, CallID: "c1", Changes: change})
	step(fsm.ChangesDecided{ID: "1.c1", Accepted: []string{"1"}, Comment: "not the second"})
	step(fsm.ToolCompleted{Turn: 1, CallID: "c1", Result: "applied in part"})
	step(fsm.PostToolsHookCompleted{Turn: 1, ActionTaken: "committed"})
	step(fsm.LlmCompleted{Request: 2, ToolCalls: []fsm.ToolCall{{ID: "c2", Name: "edit_file", Arguments: "{}"}}})
	step(fsm.ChangesProposed{Turn: 1, CallID: "c2", Changes: change})
	step(fsm.ChangesDecided{ID: "2.c2", Rejected: []string{"1", "2"}, Comment: "no"})
	step(fsm.LlmTextDelta{Request: 3, Text: "done"})
	step(fsm.LlmCompleted{Request: 3})
	step(fsm.UserInput{Text: "turn two"})
	// A turn ends on a final text: an empty answer is asked again (47.4).
	step(fsm.LlmTextDelta{Request: 4, Text: "ok"})
	step(fsm.LlmCompleted{Request: 4})
	step(fsm.Rewind{Turn: 2, Restore: fsm.RestoreBoth})
	step(fsm.Rewind{Turn: 1, Restore: fsm.RestoreFiles})
	step(fsm.Redo{})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	rp, err := Replay(path, fsm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Rejected) > 0 {
		t.Fatalf("replay rejected %v", rp.Rejected)
	}
	if got, want := rp.M.State().Describe(), m.State().Describe(); got != want {
		t.Fatalf("replayed state %s, want %s", got, want)
	}
	if got, want := fsm.Describe(rp.M.Checkpoints()), fsm.Describe(m.Checkpoints()); got != want {
		t.Fatalf("replayed checkpoints %s, want %s", got, want)
	}
	got, want := rp.M.Messages(), m.Messages()
	if len(got) != len(want) {
		t.Fatalf("replayed %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Content != want[i].Content {
			t.Fatalf("message %d: %q, want %q", i, got[i].Content, want[i].Content)
		}
	}
	if !rp.M.CanRedo() || m.State().Redo != 1 {
		t.Fatalf("redo state lost: Replayed %v, original %d", rp.M.CanRedo(), m.State().Redo)
	}
}
