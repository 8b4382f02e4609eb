package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestPlanModeReadOnlyCommands: with tools.plan_commands = "read-only",
// plan mode runs the model's commands in the sandbox with the workspace
// read-only, still asking the user (tools.bash = "ask"): one that reads
// works, one that writes is blocked and never offered a run outside the
// sandbox; the model was told it may run commands that only read. With
// the default ("off") the same command is refused unrun.
func TestPlanModeReadOnlyCommands(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if s := sandbox.New(sandbox.Policy{Root: t.TempDir()}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	for _, tc := range []struct {
		name    string
		setting string
		asked   int
		read    string // what the reading command's result holds
	}{
		{"read-only commands", config.PlanCommandsReadOnly, 2, "the contents\n"},
		{"off", config.PlanCommandsOff, 0, "bash is refused in plan mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var results []string
			var note string
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range req.Messages {
					if m.Note && strings.Contains(m.Content, "plan mode") {
						note = m.Content
					}
				}
				r, isTool := lastToolResult(req)
				switch {
				case !isTool:
					respond(req, emit, "", call("b1", "bash", `{"command":"cat a.txt; ls sub"}`))
				case len(results) == 0:
					results = append(results, r)
					respond(req, emit, "", call("b2", "bash", `{"command":"echo changed > a.txt; touch sub/new; git commit --allow-empty -qm x; echo exit=$?"}`))
				default:
					results = append(results, r)
					respond(req, emit, "done")
				}
			})
			var asked []Approval
			h := newTestHost(t, model, func(c *config.Config) {
				c.Tools.Bash = config.PolicyAsk
				c.Tools.PlanCommands = tc.setting
			})
			h.editor.approve = func(a Approval) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, a)
				return true, nil
			}
			dir := gitRepo(t, map[string]string{"a.txt": "the contents\n", "sub/keep": ""})
			s, err := h.AddFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Controls().SetMode(context.Background(), fsm.ModePlan); err != nil {
				t.Fatal(err)
			}
			s.Ask(context.Background(), "why is a.txt like that?")
			h.editor.turnEnded(t, 1)
			mu.Lock()
			defer mu.Unlock()
			if len(results) != 2 {
				t.Fatalf("results %q", results)
			}
			if !strings.Contains(results[0], tc.read) {
				t.Errorf("the reading command's result %q lacks %q", results[0], tc.read)
			}
			if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "the contents\n" {
				t.Errorf("a.txt was written in plan mode: %q", data)
			}
			if _, err := os.Stat(filepath.Join(dir, "sub", "new")); err == nil {
				t.Error("sub/new was created in plan mode")
			}
			if out := runGit(t, dir, "log", "--oneline"); strings.Count(out, "\n") != 1 {
				t.Errorf("a commit was made in plan mode:\n%s", out)
			}
			if len(asked) != tc.asked {
				t.Fatalf("asked %d times, want %d: %+v", len(asked), tc.asked, asked)
			}
			for _, a := range asked {
				if a.Tool != "bash" {
					t.Errorf("asked %q: a read-only command is never offered a run outside the sandbox", a.Tool)
				}
			}
			if tc.setting == config.PlanCommandsOff {
				if !strings.Contains(results[1], "bash is refused in plan mode") || !strings.Contains(note, "running commands are refused") {
					t.Errorf("off: result %q, note %q", results[1], note)
				}
				return
			}
			if !strings.Contains(results[1], "blocked by the sandbox: write to ") || !strings.Contains(results[1], "read-only") {
				t.Errorf("the writing command's result %q does not say the sandbox kept the workspace read-only", results[1])
			}
			if !strings.Contains(note, "run commands that only read") {
				t.Errorf("the model was not told it may run read-only commands: %q", note)
			}
		})
	}
}
