package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// A child never gets more than its parent, whatever its definition
// asks: a user's definition that asks for every permission (Claude
// Code's permissionMode: bypassPermissions) gets, in each of its
// batches, its parent's batch policy narrowed (toolcall.Policy.Narrow) —
// a plan-mode parent's child is read-only, a parent's bash deny is the
// child's, an untrusted folder's child is untrusted — and what it then
// runs is refused: nothing is written, no command runs.
func TestSubagentNeverMoreThanParent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  fsm.Mode
		bash  config.Policy
		check func(p toolcall.Policy) string
		// write: the child also tries to write (refused in plan mode).
		write bool
	}{
		{"plan parent, read-only child", fsm.ModePlan, config.PolicyAllow, func(p toolcall.Policy) string {
			if p.Mode != fsm.ModePlan {
				return "mode " + string(p.Mode) + ", want plan"
			}
			return ""
		}, true},
		{"bash deny in the parent, deny in the child", fsm.ModeAgent, config.PolicyDeny, func(p toolcall.Policy) string {
			if p.Bash != config.PolicyDeny || p.Fetch == config.PolicyAllow {
				return "bash " + string(p.Bash) + ", fetch " + string(p.Fetch) + ": want deny, and fetch not allowed"
			}
			return ""
		}, false},
		{"untrusted folder, untrusted child", fsm.ModeAgent, config.PolicyAsk, func(p toolcall.Policy) string {
			if p.Trusted || p.Bash != config.PolicyAsk {
				return "trusted or bash " + string(p.Bash) + ": want untrusted, ask"
			}
			return ""
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			def := "---\nname: yolo\ndescription: does anything\ntools: Read, Write, Bash\npermissionMode: bypassPermissions\n---\nDo it without asking.\n"
			if err := os.MkdirAll(filepath.Join(home, ".claude", "agents"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".claude", "agents", "yolo.md"), []byte(def), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
			started, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			var mu sync.Mutex
			var childResults map[string]string
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				task := childTask(req)
				_, isResult := lastToolResult(req)
				switch {
				case task == "" && !isResult:
					respond(req, emit, "", agentCall("y1", "yolo", "change a.go and run it"))
				case task == "":
					respond(req, emit, "parent done")
				case !isResult:
					once.Do(func() { close(started) })
					select {
					case <-release:
					case <-ctx.Done():
						return
					}
					calls := []fsm.ToolCall{call("e2", "bash", `{"command":"touch ran"}`)}
					if tc.write {
						calls = append(calls, call("e1", "write_file", `{"path":"a.go","content":"package b\n"}`))
					}
					respond(req, emit, "", calls...)
				default:
					mu.Lock()
					childResults = toolResults(req)
					mu.Unlock()
					respond(req, emit, "child done")
				}
			})
			h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = tc.bash })
			h.editor.approve = func(a Approval) (bool, error) { return false, nil } // asked, the user denies
			s, err := h.AddFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := s.SetMode(ctx, tc.mode); err != nil {
				t.Fatal(err)
			}
			turn, err := s.Ask(ctx, "go")
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-started:
			case <-time.After(60 * time.Second):
				t.Fatal("the child never asked its model")
			}
			// The policy a batch of the child runs under.
			var child *Conversation
			if err := s.call(ctx, func() {
				for _, c := range s.children.running {
					child = c
				}
			}); err != nil || child == nil {
				t.Fatalf("no running child (%v)", err)
			}
			var p toolcall.Policy
			if err := child.call(ctx, func() { p = child.newBatch(fsm.ExecuteTools{Turn: 1}).Policy }); err != nil {
				t.Fatal(err)
			}
			if why := tc.check(p); why != "" {
				t.Errorf("the child's batch policy: %s (%+v)", why, p)
			}
			close(release)
			h.editor.turnEndedIn(t, s.ID(), turn)
			mu.Lock()
			defer mu.Unlock()
			ids := []string{"e2"}
			if tc.write {
				ids = append(ids, "e1")
			}
			for _, id := range ids {
				if !strings.HasPrefix(childResults[id], "tool error") && !strings.Contains(childResults[id], "denied") {
					t.Errorf("child call %s: %q, want it refused", id, childResults[id])
				}
			}
			if data, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(data) != "package a\n" {
				t.Errorf("a.go written: %q", data)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Errorf("the child's command ran")
			}
		})
	}
}

// The caps of [subagents] in loom.toml reach the spawn transition: with
// max_depth = 0 the agent call is a tool error the model reads, and no
// child starts; with max_per_turn = 1 the second child of a turn is
// refused.
func TestSubagentCapsFromConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*config.Subagents)
		want  string
	}{
		{"depth 0", func(s *config.Subagents) { s.MaxDepth = 0 }, "subagents are off here (depth cap 0)"},
		{"one per turn", func(s *config.Subagents) { s.MaxPerTurn = 1 }, "1 subagents were started this turn, the cap per turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
			var mu sync.Mutex
			var results map[string]string
			model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
				task := childTask(req)
				_, isResult := lastToolResult(req)
				switch {
				case task == "" && !isResult:
					respond(req, emit, "", agentCall("r1", "researcher", "look at a.go"), agentCall("r2", "researcher", "look again"))
				case task == "":
					mu.Lock()
					results = toolResults(req)
					mu.Unlock()
					respond(req, emit, "parent done")
				default:
					respond(req, emit, "nothing to report")
				}
			})
			h := newTestHost(t, model, func(c *config.Config) { tc.tweak(&c.Subagents) })
			s, err := h.AddFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Ask(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			h.editor.turnEndedIn(t, s.ID(), turn)
			mu.Lock()
			defer mu.Unlock()
			refused := 0
			for _, r := range results {
				if strings.HasPrefix(r, "tool error") && strings.Contains(r, tc.want) {
					refused++
				}
			}
			if want := map[string]int{"depth 0": 2, "one per turn": 1}[tc.name]; refused != want {
				t.Errorf("%d calls refused with %q, want %d: %q", refused, tc.want, want, results)
			}
		})
	}
}
