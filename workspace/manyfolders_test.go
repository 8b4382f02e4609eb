package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestTwentyFoldersConcurrentTurns: twenty folders run a turn at once,
// each a sandboxed command and an edit, and each commits its own file.
// Under -race this is the load after which the race runtime's exit was
// seen to crash (racefini, issue 47); the test binary must exit 0.
func TestTwentyFoldersConcurrentTurns(t *testing.T) {
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		tools := 0
		for _, m := range req.Messages {
			if m.Role == fsm.RoleTool {
				tools++
			}
		}
		switch tools {
		case 0:
			respond(req, emit, "", call("b", "bash", `{"command":"echo ran > ran.txt"}`))
		case 1:
			respond(req, emit, "", call("r", "read_file", `{"path":"a.txt"}`))
		case 2:
			respond(req, emit, "", call("e", "write_file", `{"path":"a.txt","content":"agent\n"}`))
		default:
			respond(req, emit, "done")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	const n = 20
	var convs []*Conversation
	var dirs []string
	for i := range n {
		dir := gitRepo(t, map[string]string{"a.txt": fmt.Sprintf("folder %d\n", i)})
		s, err := h.AddFolder(dir)
		if err != nil {
			t.Fatal(err)
		}
		convs, dirs = append(convs, s), append(dirs, dir)
	}
	for _, s := range convs {
		if _, err := s.Ask(context.Background(), "run and edit"); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range convs {
		if end := h.editor.turnEndedIn(t, s.ID(), 1); end.Outcome != fsm.TurnDone {
			t.Fatalf("folder %d: turn %s", i, end.Outcome)
		}
		if b, err := os.ReadFile(filepath.Join(dirs[i], "a.txt")); err != nil || string(b) != "agent\n" {
			t.Errorf("folder %d: a.txt %q, %v", i, b, err)
		}
		if got := runGit(t, dirs[i], "log", "-1", "--format=%s"); got == "initial\n" {
			t.Errorf("folder %d: nothing committed", i)
		}
	}
}
