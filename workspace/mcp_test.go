package workspace

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/proctest"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// mcpHost starts a host whose model is the scripted model in script (the
// llm "script" provider) and whose MCP servers are what servers returns
// at each (re)load.
func mcpHost(t *testing.T, script string, servers func() map[string]config.MCPServer) *testHost {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.toml")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := newRecordingEditor()
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Provider, cfg.Model.Name, cfg.Model.Script = config.ProviderScript, "scripted", path
			cfg.MCP.Servers = servers()
			return cfg, nil
		},
		StateDir: t.TempDir(),
	})
	t.Cleanup(h.Close)
	return &testHost{Host: h, editor: ed}
}

func fixed(m map[string]config.MCPServer) func() map[string]config.MCPServer {
	return func() map[string]config.MCPServer { return m }
}

func everythingServer(t *testing.T, approve config.Policy) config.MCPServer {
	return config.MCPServer{Command: mcptest.Find(t).Everything, Approve: approve}
}

func (h *testHost) serverReady(t *testing.T, name string) {
	t.Helper()
	h.editor.waitFor(t, "MCP server "+name+" ready", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.HasPrefix(n.Text, "MCP server \""+name+"\" is ready")
	})
}

func (h *testHost) toolNote(t *testing.T, name string, status fsm.ToolStatus) *ToolNote {
	t.Helper()
	return h.editor.waitFor(t, name+" "+string(status), func(n Notification) bool {
		return n.Kind == NoteTool && n.Tool.Name == name && n.Tool.Status == status
	}).Tool
}

const echoScript = `
[[step]]
match.last_user_contains = "echo"
match.has_tool = "ev__echo"
text = ["Asking the server. "]
  [[step.tool_call]]
  name = "ev__echo"
  arguments = '{"message":"hello from loom"}'

[[step]]
match.last_tool_result_contains = "hello from loom"
text = ["The server echoed it."]

[[step]]
match.last_tool_result_contains = "denied by the user"
text = ["You denied it."]

[[step]]
match.last_tool_result_contains = "disabled here"
text = ["It is disabled."]
`

func TestMCPToolCalledByScriptedModel(t *testing.T) {
	h := mcpHost(t, echoScript, fixed(map[string]config.MCPServer{"ev": everythingServer(t, config.PolicyAllow)}))
	s, err := h.AddFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h.serverReady(t, "ev")
	if _, err := s.Ask(context.Background(), "echo something"); err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, 1); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	if got := h.editor.text(1); got != "Asking the server. The server echoed it." {
		t.Errorf("text = %q", got)
	}
	if note := h.toolNote(t, "ev__echo", fsm.ToolSucceeded); note == nil {
		t.Fatal("no tool note")
	}
	msgs, _ := s.History(context.Background())
	var result string
	for _, m := range msgs {
		if m.Role == fsm.RoleTool {
			result = m.Content
		}
	}
	if !strings.Contains(result, "Echo: hello from loom") {
		t.Errorf("tool result in the conversation = %q", result)
	}
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.MCPServers) != 1 || st.MCPServers[0].State != mcp.StateReady || st.MCPServers[0].Tools < 10 {
		t.Errorf("status MCP servers = %+v", st.MCPServers)
	}
}

func TestMCPApprovalAskDenyAlways(t *testing.T) {
	h := mcpHost(t, echoScript+`
[[step]]
match.last_user_contains = "twice"
  [[step.tool_call]]
  name = "ev__echo"
  arguments = '{"message":"one"}'
  [[step.tool_call]]
  name = "ev__echo"
  arguments = '{"message":"two"}'

[[step]]
match.last_tool_result_contains = "two"
text = ["Both ran."]
`, fixed(map[string]config.MCPServer{"ev": everythingServer(t, config.PolicyAsk)}))
	var mu sync.Mutex
	var asked []Approval
	answer := false
	h.editor.approve = func(a Approval) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, a)
		if answer && a.Always != nil {
			a.Always()
		}
		return answer, nil
	}
	s, _ := h.AddFolder(t.TempDir())
	h.serverReady(t, "ev")

	s.Ask(context.Background(), "echo, please")
	h.editor.turnEnded(t, 1)
	if got := h.editor.text(1); !strings.HasSuffix(got, "You denied it.") {
		t.Errorf("after a denial the model read %q", got)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].Server != "ev" || asked[0].Tool != "ev__echo" ||
		!strings.Contains(asked[0].Detail, "tool echo") || !strings.Contains(asked[0].Detail, `{"message":"hello from loom"}`) {
		t.Errorf("approval asked = %+v", asked)
	}
	answer = true
	mu.Unlock()

	// "Always allow" on the first of two calls: the second is not asked.
	s.Ask(context.Background(), "echo twice")
	if end := h.editor.turnEnded(t, 2); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn 2 ended %s", end.Outcome)
	}
	if got := h.editor.text(2); got != "Both ran." {
		t.Errorf("turn 2 text = %q", got)
	}
	mu.Lock()
	if len(asked) != 2 {
		t.Errorf("asked %d times, want 2 (deny, then always)", len(asked))
	}
	mu.Unlock()
}

func TestMCPDenyPolicy(t *testing.T) {
	h := mcpHost(t, echoScript, fixed(map[string]config.MCPServer{"ev": everythingServer(t, config.PolicyDeny)}))
	h.editor.approve = func(Approval) (bool, error) { t.Error("asked under deny"); return true, nil }
	s, _ := h.AddFolder(t.TempDir())
	h.serverReady(t, "ev")
	s.Ask(context.Background(), "echo")
	h.editor.turnEnded(t, 1)
	if got := h.editor.text(1); !strings.HasSuffix(got, "It is disabled.") {
		t.Errorf("text = %q", got)
	}
}

func TestMCPCancelMidCall(t *testing.T) {
	h := mcpHost(t, `
[[step]]
match.last_user_contains = "long"
  [[step.tool_call]]
  name = "ev__trigger-long-running-operation"
  arguments = '{"duration":120,"steps":240}'

[[step]]
match.last_user_contains = "echo"
  [[step.tool_call]]
  name = "ev__echo"
  arguments = '{"message":"after cancel"}'

[[step]]
match.last_tool_result_contains = "after cancel"
text = ["Still working."]
`, fixed(map[string]config.MCPServer{"ev": everythingServer(t, config.PolicyAllow)}))
	s, _ := h.AddFolder(t.TempDir())
	h.serverReady(t, "ev")
	s.Ask(context.Background(), "run the long operation")
	// Progress from the server reaches the editor.
	h.editor.waitFor(t, "progress of the long call", func(n Notification) bool {
		return n.Kind == NoteTool && n.Tool.Status == fsm.ToolRunning && strings.Contains(n.Tool.Detail, "/240")
	})
	if err := s.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if end := h.editor.turnEnded(t, 1); end.Outcome != fsm.TurnCancelled {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	s.Ask(context.Background(), "echo")
	h.editor.turnEnded(t, 2)
	if got := h.editor.text(2); got != "Still working." {
		t.Errorf("after cancel: %q", got)
	}
}

func TestMCPServerCrashReportedOnceAgentKeepsWorking(t *testing.T) {
	h := mcpHost(t, `
[[step]]
text = ["Fine without it."]
`, fixed(map[string]config.MCPServer{"db": {Command: "sh", Args: []string{"-c", "echo 'db: connection refused' >&2; exit 1"}}}))
	s, _ := h.AddFolder(t.TempDir())
	h.editor.waitFor(t, "the crash report", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, `MCP server "db" failed to start`) && strings.Contains(n.Text, "db: connection refused")
	})
	s.Ask(context.Background(), "hello")
	h.editor.turnEnded(t, 1)
	reports := 0
	h.editor.mu.Lock()
	for _, n := range h.editor.notes {
		if n.Kind == NoteError && strings.Contains(n.Text, `"db"`) {
			reports++
		}
	}
	h.editor.mu.Unlock()
	if reports != 1 {
		t.Errorf("reported %d times", reports)
	}
	st, _ := s.Status(context.Background())
	if len(st.MCPServers) != 1 || st.MCPServers[0].State != mcp.StateFailed {
		t.Errorf("status = %+v", st.MCPServers)
	}
}

func TestMCPReloadAddsServer(t *testing.T) {
	var servers atomic.Value
	servers.Store(map[string]config.MCPServer{})
	h := mcpHost(t, echoScript, func() map[string]config.MCPServer { return servers.Load().(map[string]config.MCPServer) })
	s, _ := h.AddFolder(t.TempDir())
	st, _ := s.Status(context.Background())
	if len(st.MCPServers) != 0 {
		t.Fatalf("servers before = %+v", st.MCPServers)
	}
	servers.Store(map[string]config.MCPServer{"ev": everythingServer(t, config.PolicyAllow)})
	s.folder.ReloadConfig()
	h.serverReady(t, "ev")
	s.Ask(context.Background(), "echo")
	h.editor.turnEnded(t, 1)
	if got := h.editor.text(1); got != "Asking the server. The server echoed it." {
		t.Errorf("text = %q", got)
	}
}

func TestMCPWorkspaceServerStartsOnlyInATrustedFolder(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(strconv.FormatBool(trusted), func(t *testing.T) {
			xdg := t.TempDir()
			t.Setenv("XDG_CONFIG_HOME", xdg)
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			marker := filepath.Join(dir, "started")
			os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte(`
[mcp.servers.repo]
command = "sh"
args = ["-c", "touch `+marker+`; echo repo server ran >&2; exit 1"]
`), 0o644)
			if trusted {
				os.MkdirAll(filepath.Join(xdg, "loom"), 0o755)
				os.WriteFile(filepath.Join(xdg, "loom", "loom.toml"), []byte("[trust]\nfolders = [\""+dir+"\"]\n"), 0o644)
			}
			ed := newRecordingEditor()
			h := NewHost(HostOptions{Editor: ed, StateDir: t.TempDir()})
			t.Cleanup(h.Close)
			s, _ := h.AddFolder(dir)
			if trusted {
				ed.waitFor(t, "the trusted server's report", func(n Notification) bool {
					return n.Kind == NoteError && strings.Contains(n.Text, "repo server ran")
				})
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("the trusted folder's server did not run: %v", err)
				}
				return
			}
			ed.waitFor(t, "the trust notice", func(n Notification) bool {
				return n.Kind == NoteError && strings.Contains(n.Text, "mcp.servers.repo.command")
			})
			st, _ := s.Status(context.Background())
			if len(st.MCPServers) != 1 || st.MCPServers[0].State != mcp.StateNotStarted || !strings.Contains(st.MCPServers[0].Error, "loom.trust") {
				t.Errorf("status = %+v, want repo not started, saying how to trust", st.MCPServers)
			}
			h.Close()
			if _, err := os.Stat(marker); err == nil {
				t.Error("the workspace's server ran in an untrusted folder")
			}
		})
	}
}

// hangingServer never answers initialize; it says its pid on stderr.
func hangingServer() config.MCPServer {
	return config.MCPServer{Command: "sh", Args: []string{"-c", "echo pid=$$ >&2; exec sleep 600"}}
}

// stderrPids is a log handler that passes on the pids MCP servers print
// as "pid=N" on their stderr (which the session logs).
type stderrPids chan int

func (c stderrPids) Enabled(context.Context, slog.Level) bool { return true }
func (c stderrPids) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c stderrPids) WithGroup(string) slog.Handler            { return c }
func (c stderrPids) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			if pid, err := strconv.Atoi(strings.TrimPrefix(a.Value.String(), "pid=")); err == nil {
				c <- pid
			}
		}
		return true
	})
	return nil
}

func TestMCPDoesNotDelayTheFirstPromptAndLeavesNoOrphan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.toml")
	os.WriteFile(path, []byte("[[step]]\ntext = [\"Answered while the servers start.\"]\n"), 0o644)
	pids := make(stderrPids, 2)
	ed := newRecordingEditor()
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Provider, cfg.Model.Name, cfg.Model.Script = config.ProviderScript, "scripted", path
			cfg.MCP.Servers = map[string]config.MCPServer{"a": hangingServer(), "b": hangingServer()}
			return cfg, nil
		},
		StateDir: t.TempDir(),
		Logger:   slog.New(pids),
	})
	t.Cleanup(h.Close)
	s, _ := h.AddFolder(t.TempDir())
	s.Ask(context.Background(), "hello")
	if end := ed.turnEnded(t, 1); end.Outcome != fsm.TurnDone {
		t.Fatalf("turn ended %s", end.Outcome)
	}
	st, _ := s.Status(context.Background())
	if len(st.MCPServers) != 2 || st.MCPServers[0].State != mcp.StateStarting || st.MCPServers[1].State != mcp.StateStarting {
		t.Errorf("status = %+v, want both still starting", st.MCPServers)
	}
	var started []int
	for len(started) < 2 {
		select {
		case pid := <-pids:
			started = append(started, pid)
		case <-time.After(30 * time.Second):
			t.Fatalf("the servers never started (%v)", started)
		}
	}
	h.Close()
	for _, pid := range started {
		if alive := proctest.LivingInGroup(pid); len(alive) != 0 {
			t.Errorf("after Close, group %d still has %v", pid, alive)
		}
	}
}
