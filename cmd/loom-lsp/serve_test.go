package main

import (
	"context"
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

// The core scenario against the built binary over real stdio pipes.
func TestBinaryCoreScenario(t *testing.T) {
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	script := writeScript(t, coreScript)
	path := writeFile(t, folder, "a.txt", "hello world\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, ed := startInitialized(t, ctx, loomEditor([]string{folder}, scriptedOptions(script, nil)))
	if err := ed.OpenFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	var res jsonrpc.AskResult
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: "change hello"}, &res); err != nil {
		t.Fatal(err)
	}
	awaitText(t, ctx, ed, "answer", func(text string) bool { return text == "Let me read it.Done." })
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
			c, ed := startInitialized(t, ctx, fakeeditor.Config{Folders: []string{t.TempDir()}}, args...)
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, ed := startInitialized(t, ctx, fakeeditor.Config{Folders: []string{t.TempDir()}})
	_ = ed.Exit(ctx)
	if code := c.wait(t); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

// BenchmarkStartToInitialize measures process start to the initialize
// response.
func BenchmarkStartToInitialize(b *testing.B) {
	bin := loomBinary
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
	bin := loomBinary
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
