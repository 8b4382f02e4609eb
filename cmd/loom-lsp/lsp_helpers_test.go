package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// This file holds what the tests that run `loom-lsp serve` share: starting
// the binary on real pipes, connecting the fake editor, the scripted
// model's initializationOptions, raw LSP frames.

// pipeConn joins the child's stdout and stdin.
type pipeConn struct {
	io.ReadCloser
	io.WriteCloser
}

func (p pipeConn) Close() error {
	_ = p.WriteCloser.Close()
	return p.ReadCloser.Close()
}

// child is a running loom-lsp and its stdio.
type child struct {
	cmd  *exec.Cmd
	conn pipeConn
	done chan error
}

// startServer starts the binary with isolated config and state; args
// default to "serve". Cleanup closes stdin and waits for the exit.
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

// wait waits for the process to exit and returns its exit code.
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

// startEditor starts `loom-lsp serve` (or args) and connects a fake editor
// configured by cfg; ctx bounds the connection. Nothing is sent yet.
func startEditor(t testing.TB, ctx context.Context, cfg fakeeditor.Config, args ...string) (*child, *fakeeditor.Editor) {
	t.Helper()
	c := startServer(t, loomBinary, args...)
	return c, fakeeditor.Connect(ctx, c.conn, cfg)
}

// startInitialized is startEditor followed by a successful initialize.
func startInitialized(t testing.TB, ctx context.Context, cfg fakeeditor.Config, args ...string) (*child, *fakeeditor.Editor) {
	t.Helper()
	c, ed := startEditor(t, ctx, cfg, args...)
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, ed
}

// loomEditor is a fake editor with everything a loom client declares
// (experimental.loom, applyEdit, work-done progress) on folders.
func loomEditor(folders []string, initOptions map[string]any) fakeeditor.Config {
	return fakeeditor.Config{Loom: true, ApplyEdit: true, WorkDoneProgress: true, Folders: folders, InitializationOptions: initOptions}
}

// scriptedOptions is the initializationOptions of a session on the
// scripted model at script, with auto-commit off; extra adds or replaces
// sections (e.g. "tools").
func scriptedOptions(script string, extra map[string]any) map[string]any {
	opts := map[string]any{
		"model": map[string]any{"provider": "script", "script": script},
		"hooks": map[string]any{"auto_commit": false},
	}
	for k, v := range extra {
		opts[k] = v
	}
	return opts
}

// awaitText waits until the text streamed to the editor (every
// loom/displayMessage, joined) satisfies done.
func awaitText(t testing.TB, ctx context.Context, ed *fakeeditor.Editor, what string, done func(text string) bool) {
	t.Helper()
	err := ed.Await(ctx, what, func(msgs []fakeeditor.Message) bool {
		var text strings.Builder
		for _, m := range msgs {
			var p jsonrpc.DisplayMessageParams
			if m.Method == jsonrpc.MethodDisplayMessage && json.Unmarshal(m.Params, &p) == nil {
				text.WriteString(p.Text)
			}
		}
		return done(text.String())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeFile writes body to name in dir and returns its path.
func writeFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// coreScript reads a.txt, replaces "hello" with "goodbye" and says Done.
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

// blockingStdinPipe gives cmd a stdin pipe in blocking mode, as Node,
// Python and Neovim clients create it. (exec.Cmd.StdinPipe hands the
// child a non-blocking pipe, which Go's poller can interrupt anyway and
// which hid the 5 s exit.) The parent's copy of the read end is left to
// the garbage collector: it does not keep the child from seeing EOF.
func blockingStdinPipe(cmd *exec.Cmd) (io.WriteCloser, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, err
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin-r"), os.NewFile(uintptr(fds[1]), "stdin-w")
	cmd.Stdin = r
	return w, nil
}

// lspFrame frames one JSON-RPC message.
func lspFrame(msg string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(msg), msg) }

// awaitResponse reads frames until the response with the given id.
func awaitResponse(t testing.TB, in *bufio.Reader, id int) {
	t.Helper()
	for {
		length := -1
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				t.Fatalf("waiting for response %d: %v", id, err)
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(in, body); err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if m.Method == "" && m.ID != nil && *m.ID == id {
			if len(m.Error) > 0 && string(m.Error) != "null" {
				t.Fatalf("response %d: error %s", id, m.Error)
			}
			return
		}
	}
}
