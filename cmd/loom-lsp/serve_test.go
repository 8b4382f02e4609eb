package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// buildBinary builds loom-lsp into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loom-lsp")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// pipeConn joins the child's stdout and stdin.
type pipeConn struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipeConn) Close() error {
	_ = p.WriteCloser.Close()
	return p.ReadCloser.Close()
}

type child struct {
	cmd  *exec.Cmd
	conn pipeConn
	done chan error
}

// startServer starts the binary with isolated config and state.
func startServer(t testing.TB, bin string, args ...string) *child {
	t.Helper()
	home := t.TempDir()
	if len(args) == 0 {
		args = []string{"serve"}
	}
	cmd := exec.Command(bin, append(args, "--log", filepath.Join(home, "log.txt"))...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "HOME="+home)
	stdin, err := blockingStdinPipe(cmd)
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, conn: pipeConn{stdout, stdin}, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("loom-lsp did not exit after stdin closed")
		}
	})
	return c
}

func (c *child) wait(t testing.TB) int {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(10 * time.Second):
		t.Fatal("loom-lsp did not exit")
		return -1
	}
}

const coreScript = `
[[step]]
match.last_role = "user"
text = ["Let me ", "read it."]
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"hello","new_string":"goodbye"}'

[[step]]
match.last_role = "tool"
text = ["Done."]
`

// The core scenario against the built binary over real stdio pipes.
func TestBinaryCoreScenario(t *testing.T) {
	bin := buildBinary(t)
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	script := filepath.Join(t.TempDir(), "model.toml")
	if err := os.WriteFile(script, []byte(coreScript), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(folder, "a.txt")
	if err := os.WriteFile(path, []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := startServer(t, bin)
	ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{
		Loom: true, ApplyEdit: true, WorkDoneProgress: true, Folders: []string{folder},
		InitializationOptions: map[string]any{
			"model": map[string]any{"provider": "script", "script": script},
			"hooks": map[string]any{"auto_commit": false},
		},
	})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ed.OpenFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	var res jsonrpc.AskResult
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: "change hello"}, &res); err != nil {
		t.Fatal(err)
	}
	err := ed.Await(ctx, "answer", func(msgs []fakeeditor.Message) bool {
		var text strings.Builder
		for _, m := range msgs {
			var p jsonrpc.DisplayMessageParams
			if m.Method == jsonrpc.MethodDisplayMessage && json.Unmarshal(m.Params, &p) == nil {
				text.WriteString(p.Text)
			}
		}
		return text.String() == "Let me read it.Done."
	})
	if err != nil {
		t.Fatal(err)
	}
	if text, _, _ := ed.BufferText(path); text != "goodbye world\n" {
		t.Errorf("buffer = %q", text)
	}
	if err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ed.Exit(ctx); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// The command lines LSP client libraries really run: vscode-languageclient
// (TransportKind.stdio) appends --stdio, some add --clientProcessId=N.
func TestBinaryAcceptsClientTransportFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--stdio"},
		{"serve", "--stdio"},
		{"--stdio", "--clientProcessId=4242"},
		{"--clientProcessId", "4242", "--stdio"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := startServer(t, loomBinary, args...)
			ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{Folders: []string{t.TempDir()}})
			if _, err := ed.Initialize(ctx); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if err := ed.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			_ = ed.Exit(ctx)
			if code := c.wait(t); code != 0 {
				t.Fatalf("exit code %d", code)
			}
		})
	}
}

// The transports loom-lsp does not speak are refused with a message.
func TestBinaryRefusesOtherTransports(t *testing.T) {
	for _, arg := range []string{"--node-ipc", "--socket=5007", "--pipe=/tmp/loom.sock"} {
		out, err := exec.Command(loomBinary, arg).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: err = %v, want exit 2", arg, err)
		}
		if !strings.Contains(string(out), "stdio only") {
			t.Errorf("%s: output %q does not say stdio only", arg, out)
		}
	}
}

func TestBinaryExitWithoutShutdown(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := startServer(t, bin)
	ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{Folders: []string{t.TempDir()}})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	_ = ed.Exit(ctx)
	if code := c.wait(t); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

// BenchmarkStartToInitialize measures process start to the initialize
// response.
func BenchmarkStartToInitialize(b *testing.B) {
	bin := buildBinary(b)
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := startServer(b, bin)
		ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{})
		if err := ed.Call(ctx, protocol.MethodInitialize, &protocol.InitializeParams{}, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = ed.Close()
		c.wait(b)
		cancel()
		b.StartTimer()
	}
}

// BenchmarkRSS reports the server's resident memory when idle (one
// folder) and with 20 workspace folders open.
func BenchmarkRSS(b *testing.B) {
	bin := buildBinary(b)
	rss := map[int]int{}
	for _, n := range []int{1, 20} {
		var folders []string
		for range n {
			folders = append(folders, b.TempDir())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := startServer(b, bin)
		ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{Loom: true, Folders: folders})
		if _, err := ed.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		// Wait until every session reported its state, then read VmRSS.
		if err := ed.Await(ctx, "sessions started", func(msgs []fakeeditor.Message) bool {
			k := 0
			for _, m := range msgs {
				if m.Method == jsonrpc.MethodState {
					k++
				}
			}
			return k >= n
		}); err != nil {
			b.Fatal(err)
		}
		rss[n] = rssKB(b, c.cmd.Process.Pid)
		_ = ed.Close()
		c.wait(b)
		cancel()
	}
	for b.Loop() {
	}
	for n, kb := range rss {
		b.ReportMetric(float64(kb), "KB-RSS-"+strconv.Itoa(n)+"-folders")
	}
}

func rssKB(t testing.TB, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
