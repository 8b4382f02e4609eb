package workspace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// Turn ids keep increasing across a reset, and a daemon restarted after
// the reset (replaying the new journal) goes on from them.
func TestResetKeepsIDsAcrossARestart(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h := newTestHostIn(t, state, textModel(), nil)
	s, _ := h.AddFolder(folder)
	s.Ask(context.Background(), "one")
	h.editor.turnEnded(t, 1)
	s.Ask(context.Background(), "two")
	h.editor.turnEnded(t, 2)
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if turn, err := s.Ask(context.Background(), "three"); err != nil || turn != 3 {
		t.Fatalf("Ask after reset = %d, %v; want turn 3", turn, err)
	}
	h.editor.turnEnded(t, 3)
	h.Close()

	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	st, err := s2.Status(context.Background())
	if err != nil || st.Turn != 3 {
		t.Fatalf("resumed status turn %d, %v; want 3", st.Turn, err)
	}
	if got := transcript(t, s2); strings.Contains(got, "one") || !strings.Contains(got, "three") {
		t.Fatalf("resumed transcript:\n%s", got)
	}
	if turn, err := s2.Ask(context.Background(), "four"); err != nil || turn != 4 {
		t.Fatalf("Ask after the restart = %d, %v; want turn 4", turn, err)
	}
}

// Loading an older conversation never makes the ids go back: the loaded
// conversation goes on after the ids the session already used, also
// after a restart that replays its journal.
func TestLoadConversationKeepsIDsIncreasing(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h := newTestHostIn(t, state, textModel(), nil)
	s, _ := h.AddFolder(folder)
	ctx := context.Background()
	s.Ask(ctx, "old conversation")
	h.editor.turnEnded(t, 1)
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"two", "three", "four"} {
		s.Ask(ctx, p)
		h.editor.turnEnded(t, uint64(i+2))
	}
	all, err := h.Conversations(folder)
	if err != nil {
		t.Fatal(err)
	}
	var old string
	for _, c := range all {
		if !c.Live {
			old = c.ID
		}
	}
	if old == "" {
		t.Fatalf("no past conversation listed: %+v", all)
	}
	if err := s.LoadConversation(ctx, old); err != nil {
		t.Fatal(err)
	}
	if got := transcript(t, s); !strings.Contains(got, "old conversation") || strings.Contains(got, "three") {
		t.Fatalf("loaded transcript:\n%s\nconversations: %+v", got, all)
	}
	if turn, err := s.Ask(ctx, "five"); err != nil || turn != 5 {
		t.Fatalf("Ask after loading = %d, %v; want turn 5", turn, err)
	}
	h.editor.turnEnded(t, 5)
	h.Close()

	h2 := newTestHostIn(t, state, textModel(), nil)
	s2, _ := h2.AddFolder(folder)
	if turn, err := s2.Ask(ctx, "six"); err != nil || turn != 6 {
		t.Fatalf("Ask after the restart = %d, %v; want turn 6", turn, err)
	}
}

// The user's approval is an event of the machine: journaled, shown, and
// an approved command runs while a denied one does not.
func TestApprovalIsAMachineEvent(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			state, folder := t.TempDir(), t.TempDir()
			marker := filepath.Join(folder, "ran")
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				if _, isTool := lastToolResult(req); isTool {
					respond(req, emit, "ok")
					return
				}
				respond(req, emit, "", call("b1", "bash", `{"command":"touch ran"}`))
			})
			h := newTestHostIn(t, state, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAsk })
			h.editor.approve = func(Approval) (bool, error) { return approve, nil }
			s, _ := h.AddFolder(folder)
			s.Ask(context.Background(), "touch it")
			h.editor.turnEnded(t, 1)
			if _, err := os.Stat(marker); (err == nil) != approve {
				t.Fatalf("approved=%v, but the command ran: %v", approve, err == nil)
			}
			msgs, _ := s.History(context.Background())
			var result string
			for _, m := range msgs {
				if m.Role == fsm.RoleTool {
					result = m.Content
				}
			}
			if denied := strings.Contains(result, "denied by the user"); denied == approve {
				t.Fatalf("approved=%v, tool result %q", approve, result)
			}
			h.Close()
			b, err := os.ReadFile(journal.Path(state, s.folder.Path()))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(`"t":"ApprovalDecided"`)) {
				t.Fatalf("the journal has no approval decision:\n%s", b)
			}
		})
	}
}
