package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/proctest"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// waitUntil waits on the manager's change signal until ok holds, or fails
// after a deadline.
func waitUntil(t *testing.T, m *Manager, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for !ok() {
		select {
		case <-m.Changed():
		case <-deadline:
			t.Fatalf("timed out waiting for %s; status %+v", what, m.Status())
		}
	}
}

func toolByName(m *Manager, name string) *Tool {
	for _, t := range m.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func newManager(t *testing.T, specs ...Spec) *Manager {
	t.Helper()
	m := NewManager(Options{})
	t.Cleanup(m.Close)
	m.Apply(specs)
	return m
}

func everything(t *testing.T, name string) Spec {
	s := mcptest.Find(t)
	return Spec{Name: name, Command: s.Everything, Env: Environ(os.Getenv, nil), Dir: t.TempDir()}
}

func run(t *testing.T, tool *Tool, env *tools.Env, args string) tools.Result {
	t.Helper()
	res, err := tool.Run(context.Background(), env, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tool.Name(), err)
	}
	return res
}

func TestEverythingToolsAndResults(t *testing.T) {
	m := newManager(t, everything(t, "ev"))
	waitUntil(t, m, "the echo tool", func() bool { return toolByName(m, "ev__echo") != nil })

	echo := toolByName(m, "ev__echo")
	if echo.Mutating() {
		t.Error("echo is annotated readOnlyHint: true but is mutating")
	}
	if gz := toolByName(m, "ev__gzip-file-as-resource"); gz == nil || !gz.Mutating() {
		t.Errorf("gzip-file-as-resource (readOnlyHint: false) = %v, want a mutating tool", gz)
	}
	if !strings.Contains(string(echo.Schema()), `"message"`) || echo.Server() != "ev" || echo.RemoteName() != "echo" {
		t.Errorf("echo: schema %s, server %q, remote %q", echo.Schema(), echo.Server(), echo.RemoteName())
	}
	env := &tools.Env{}
	if res := run(t, echo, env, `{"message":"hi there"}`); res.IsError || !strings.Contains(res.Text, "hi there") {
		t.Errorf("echo = %+v", res)
	}
	if res := run(t, toolByName(m, "ev__get-sum"), env, `{"a":2,"b":40}`); res.IsError || !strings.Contains(res.Text, "42") {
		t.Errorf("get-sum = %+v", res)
	}
	if res := run(t, toolByName(m, "ev__get-tiny-image"), env, `{}`); !strings.Contains(res.Text, "[image: image/png, ") {
		t.Errorf("get-tiny-image = %q, want the image summarised", res.Text)
	}
	if res := run(t, toolByName(m, "ev__get-resource-reference"), env, `{"resourceType":"Text","resourceId":1}`); !strings.Contains(res.Text, "[resource <") {
		t.Errorf("get-resource-reference = %q, want the resource summarised", res.Text)
	}
	// A bad argument: the server answers isError, which the model reads.
	if res := run(t, toolByName(m, "ev__get-sum"), env, `{"a":"two","b":40}`); !res.IsError || !strings.HasPrefix(res.Text, "tool error: ") {
		t.Errorf("get-sum with a string = %+v, want a tool error", res)
	}
	if res := run(t, echo, env, `[1,2]`); !res.IsError || !strings.Contains(res.Text, "want a JSON object") {
		t.Errorf("echo with an array = %+v, want a tool error", res)
	}
	// Output is capped like bash's.
	small := &tools.Env{MaxOutputBytes: 40}
	if res := run(t, echo, small, `{"message":"`+strings.Repeat("x", 500)+`"}`); len(res.Text) > 200 || !strings.Contains(res.Text, "bytes of output cut") {
		t.Errorf("capped echo = %q", res.Text)
	}
	st := m.Status()
	if len(st) != 1 || st[0].State != StateReady || st[0].Tools != len(m.Tools()) || st[0].Tools < 10 {
		t.Errorf("status = %+v", st)
	}
}

func TestEverythingListChanged(t *testing.T) {
	m := newManager(t, everything(t, "ev"))
	// get-roots-list is registered once the server knows we support roots,
	// after initialize, and announced with notifications/tools/list_changed.
	waitUntil(t, m, "a second tools/list after list_changed with get-roots-list", func() bool {
		m.mu.Lock()
		srv := m.servers["ev"]
		n := srv.listings
		m.mu.Unlock()
		return n >= 2 && toolByName(m, "ev__get-roots-list") != nil
	})
}

func TestLongRunningProgressCancelAndTimeout(t *testing.T) {
	spec := everything(t, "ev")
	spec.Timeout = 2 * time.Second
	m := newManager(t, spec)
	waitUntil(t, m, "ready", func() bool { return toolByName(m, "ev__trigger-long-running-operation") != nil })
	long := toolByName(m, "ev__trigger-long-running-operation")
	if long.Mutating() {
		t.Error("trigger-long-running-operation is readOnlyHint: true")
	}

	var progress []string
	env := &tools.Env{Progress: func(msg string) { progress = append(progress, msg) }}
	res := run(t, long, env, `{"duration":0.3,"steps":3}`)
	if res.IsError || !strings.Contains(res.Text, "completed") {
		t.Fatalf("long-running = %+v", res)
	}
	// The last notification may race the result; the earlier ones are
	// sent a step before it.
	if !slices.Contains(progress, "1/3") || !slices.Contains(progress, "2/3") {
		t.Errorf("progress = %q, want 1/3, 2/3 …", progress)
	}

	// Cancel mid-call: Run returns with the context's error at once.
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{})
	env = &tools.Env{Progress: func(string) {
		select {
		case <-first:
		default:
			close(first)
			cancel()
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := long.Run(ctx, env, json.RawMessage(`{"duration":60,"steps":120}`))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call did not return")
	}
	// The per-call timeout (2s here) turns a slow call into a tool error.
	res = run(t, long, &tools.Env{}, `{"duration":30,"steps":1}`)
	if !res.IsError || !strings.Contains(res.Text, "no answer within 2s") {
		t.Errorf("slow call = %+v, want a timeout tool error", res)
	}
	// The server still answers.
	if res := run(t, toolByName(m, "ev__echo"), &tools.Env{}, `{"message":"still here"}`); !strings.Contains(res.Text, "still here") {
		t.Errorf("echo after cancel = %+v", res)
	}
}

func TestServerThatCrashesAtStart(t *testing.T) {
	m := newManager(t, Spec{Name: "broken", Command: "sh", Args: []string{"-c", "echo 'cannot open the database' >&2; exit 3"}, Env: Environ(os.Getenv, nil)})
	waitUntil(t, m, "a report", func() bool {
		st := m.Status()
		return len(st) == 1 && st[0].State == StateFailed
	})
	reports := m.TakeReports()
	if len(reports) != 1 || reports[0].Server != "broken" || !strings.Contains(reports[0].Text, "failed to start") ||
		!strings.Contains(reports[0].Text, "cannot open the database") {
		t.Fatalf("reports = %+v, want one naming the failure with the stderr tail", reports)
	}
	if again := m.TakeReports(); len(again) != 0 {
		t.Errorf("reported twice: %+v", again)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("a failed server offers tools: %v", m.Tools())
	}
}

func TestServerThatDiesMidCallAndNoOrphans(t *testing.T) {
	s := mcptest.Find(t)
	// A descendant in the server's process group must not outlive it.
	spec := Spec{Name: "ev", Command: "sh", Args: []string{"-c", "sleep 300 & echo started >&2; exec " + s.Everything},
		Env: Environ(os.Getenv, nil)}
	m := newManager(t, spec)
	waitUntil(t, m, "ready", func() bool { return toolByName(m, "ev__trigger-long-running-operation") != nil })
	m.mu.Lock()
	pid := m.servers["ev"].pid
	m.mu.Unlock()
	if len(proctest.LivingInGroup(pid)) != 2 {
		t.Fatalf("group %d = %v, want the server and its sleep", pid, proctest.LivingInGroup(pid))
	}
	long := toolByName(m, "ev__trigger-long-running-operation")
	env := &tools.Env{Progress: func(string) { syscall.Kill(pid, syscall.SIGKILL) }}
	res := run(t, long, env, `{"duration":60,"steps":120}`)
	if !res.IsError || !strings.Contains(res.Text, "stopped during the call") {
		t.Errorf("call to a dying server = %+v", res)
	}
	waitUntil(t, m, "the failure", func() bool { return m.Status()[0].State == StateFailed })
	reports := m.TakeReports()
	if len(reports) != 1 || !strings.Contains(reports[0].Text, "stopped") || !strings.Contains(reports[0].Text, "started") {
		t.Errorf("reports = %+v, want one with the stderr tail", reports)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("a dead server's tools are still offered")
	}
	// The sleep was killed with its group when the server was found dead.
	if alive := proctest.LivingInGroup(pid); len(alive) != 0 {
		t.Errorf("processes left: %v", alive)
	}
}

func TestCloseKillsTheProcessGroup(t *testing.T) {
	s := mcptest.Find(t)
	spec := Spec{Name: "ev", Command: "sh", Args: []string{"-c", "sleep 300 & exec " + s.Everything}, Env: Environ(os.Getenv, nil)}
	m := NewManager(Options{})
	m.Apply([]Spec{spec})
	waitUntil(t, m, "ready", func() bool { return len(m.Tools()) > 0 })
	m.mu.Lock()
	pid := m.servers["ev"].pid
	m.mu.Unlock()
	m.Close()
	if alive := proctest.LivingInGroup(pid); len(alive) != 0 {
		t.Errorf("after Close, processes left: %v", alive)
	}
}

func TestFilesystemReadOnlyAndMutating(t *testing.T) {
	s := mcptest.Find(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	m := newManager(t, Spec{Name: "fs", Command: s.Filesystem, Args: []string{dir}, Env: Environ(os.Getenv, nil), Roots: []string{dir}})
	waitUntil(t, m, "ready", func() bool { return toolByName(m, "fs__write_file") != nil })
	read, write := toolByName(m, "fs__read_text_file"), toolByName(m, "fs__write_file")
	if read.Mutating() || !write.Mutating() {
		t.Errorf("read_text_file mutating=%v, write_file mutating=%v", read.Mutating(), write.Mutating())
	}
	env := &tools.Env{}
	if res := run(t, read, env, `{"path":"`+filepath.Join(dir, "a.txt")+`"}`); !strings.Contains(res.Text, "alpha") {
		t.Errorf("read = %+v", res)
	}
	if res := run(t, write, env, `{"path":"`+filepath.Join(dir, "b.txt")+`","content":"beta"}`); res.IsError {
		t.Errorf("write = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "beta" {
		t.Errorf("b.txt = %q", b)
	}
	// Outside its allowed directory: the server's error reaches the model.
	if res := run(t, read, env, `{"path":"/etc/hostname"}`); !res.IsError {
		t.Errorf("read outside = %+v, want a tool error", res)
	}
}

func TestEnvironmentIsOnlyWhatIsNamed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret-model-key")
	t.Setenv("LOOM_TEST_TOKEN", "token-value")
	t.Setenv("LOOM_TEST_OTHER", "other-value")
	spec := everything(t, "ev")
	spec.Env = Environ(os.Getenv, map[string]string{"GITHUB_TOKEN": "LOOM_TEST_TOKEN"})
	m := newManager(t, spec)
	waitUntil(t, m, "ready", func() bool { return toolByName(m, "ev__get-env") != nil })
	res := run(t, toolByName(m, "ev__get-env"), &tools.Env{}, `{}`)
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Text), &env); err != nil {
		t.Fatalf("get-env = %q: %v", res.Text, err)
	}
	if env["GITHUB_TOKEN"] != "token-value" || env["PATH"] == "" {
		t.Errorf("env = %v, want GITHUB_TOKEN and PATH", env)
	}
	for k, v := range env {
		if v == "sk-secret-model-key" || v == "other-value" {
			t.Errorf("the server got %s=%s", k, v)
		}
	}
}

func TestApplyRestartsChangedAndStopsRemoved(t *testing.T) {
	a, b := everything(t, "a"), everything(t, "b")
	m := newManager(t, a)
	waitUntil(t, m, "a ready", func() bool { return toolByName(m, "a__echo") != nil })
	m.Apply([]Spec{a, b})
	waitUntil(t, m, "b ready", func() bool { return toolByName(m, "b__echo") != nil && toolByName(m, "a__echo") != nil })
	m.mu.Lock()
	oldA := m.servers["a"]
	m.mu.Unlock()
	b.Timeout = time.Minute // a change restarts b; a is kept
	m.Apply([]Spec{b})
	waitUntil(t, m, "a gone, b back", func() bool { return toolByName(m, "a__echo") == nil && toolByName(m, "b__echo") != nil })
	if oldA.ctx.Err() == nil {
		t.Error("a was removed but not stopped")
	}
	st := m.Status()
	if len(st) != 1 || st[0].Name != "b" {
		t.Errorf("status = %+v", st)
	}
	m.Apply([]Spec{{Name: "c", Command: "x", NotStarted: "the folder is not trusted"}})
	st = m.Status()
	if len(st) != 1 || st[0].State != StateNotStarted || st[0].Error != "the folder is not trusted" {
		t.Errorf("status = %+v", st)
	}
}

func TestToolName(t *testing.T) {
	cases := map[[2]string]string{
		{"gh", "search_issues"}:        "gh__search_issues",
		{"gh", "repo.get/x"}:           "gh__repo_get_x",
		{"s", strings.Repeat("t", 80)}: "s__" + strings.Repeat("t", 61),
	}
	for in, want := range cases {
		if got := toolName(in[0], in[1]); got != want {
			t.Errorf("toolName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}
