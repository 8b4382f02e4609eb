package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// TestMain runs the test binary as a fake language server when
// LOOM_FAKE_LS names its fault: slow, crashing, flooding or silent.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOOM_FAKE_LS"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return nil }

func fakeServer(mode string) {
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(stdio{}))
	conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		switch req.Method() {
		case "initialize":
			if mode == "slowinit" {
				select {} // never answers
			}
			caps := map[string]any{"textDocumentSync": 1}
			if mode == "pull" {
				caps["diagnosticProvider"] = map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}
			}
			return map[string]any{"capabilities": caps}, nil
		case "textDocument/diagnostic":
			// Answered only by a server that said it would: the
			// others' clients never ask.
			// The kind left empty, as gopls v0.23 does.
			return map[string]any{"kind": "", "items": []map[string]any{{
				"range":    map[string]any{"start": map[string]any{"line": 2, "character": 4}, "end": map[string]any{"line": 2, "character": 5}},
				"severity": 1, "source": "fake", "message": "pulled problem"}}}, nil
		case "textDocument/didOpen", "textDocument/didChange":
			var p struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
				} `json:"textDocument"`
			}
			_ = jsonUnmarshal(req.Params(), &p)
			switch mode {
			case "crash":
				os.Exit(3)
			case "flood":
				ds := make([]map[string]any, 10000)
				for i := range ds {
					ds[i] = map[string]any{"range": map[string]any{"start": map[string]any{"line": i, "character": 0}, "end": map[string]any{"line": i, "character": 1}},
						"severity": 1, "source": "fake", "message": fmt.Sprintf("problem %d %s", i, strings.Repeat("x", 100))}
				}
				go conn.Notify(context.Background(), "textDocument/publishDiagnostics", map[string]any{"uri": p.TextDocument.URI, "version": p.TextDocument.Version, "diagnostics": ds})
			}
			return nil, nil
		case "shutdown":
			return nil, nil
		case "exit":
			os.Exit(0)
		}
		return nil, nil
	})
	<-conn.Done()
}

func fakePool(t *testing.T, mode string) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(PoolOptions{
		Root:     t.TempDir(),
		Servers:  []ServerSpec{{Name: "fake", Command: []string{"fake"}, Languages: map[string]string{".fk": "fake"}}},
		Env:      append(os.Environ(), "LOOM_FAKE_LS="+mode),
		LookPath: func(string) (string, error) { return exe, nil },
	})
	t.Cleanup(p.Close)
	return p
}

// A server that hangs, crashes or never publishes costs at most the wait
// and gives no answer; one that floods is capped.
func TestFaultyServers(t *testing.T) {
	for _, mode := range []string{"slowinit", "crash", "silent"} {
		t.Run(mode, func(t *testing.T) {
			p := fakePool(t, mode)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := p.Diagnostics(ctx, "/w/a.fk", "text")
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("want ErrUnavailable, got %v", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v, past the 500 ms bound", d)
			}
		})
	}
	t.Run("flood", func(t *testing.T) {
		p := fakePool(t, "flood")
		// A bound for a loaded machine: the test is about the cap.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		ds, err := p.Diagnostics(ctx, "/w/a.fk", "text")
		if err != nil || len(ds) != 10000 {
			t.Fatalf("got %d, %v", len(ds), err)
		}
		out := Format([]Report{{Path: "a.fk", New: ds}}, DefaultLimits)
		if len(out) > DefaultLimits.MaxBytes+200 || !strings.Contains(out, "more not listed") {
			t.Fatalf("a flood is not capped (%d bytes):\n%.300s", len(out), out)
		}
	})
}

// A server that answers textDocument/diagnostic (and never publishes)
// is asked: the answer comes with no wait for publications to go quiet.
func TestPullDiagnostics(t *testing.T) {
	p := fakePool(t, "pull")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, text := range []string{"one", "two", "two"} {
		ds, err := p.Diagnostics(ctx, "/w/a.fk", text)
		if err != nil || len(ds) != 1 || ds[0].Message != "pulled problem" || ds[0].Line != 3 || ds[0].Col != 5 {
			t.Fatalf("%s: got %+v, %v", text, ds, err)
		}
	}
}

// The crashed server is forgotten: the next question starts it anew
// rather than waiting on a dead one.
func TestCrashedServerIsRestarted(t *testing.T) {
	p := fakePool(t, "crash")
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := p.Diagnostics(ctx, "/w/a.fk", "text")
		cancel()
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("want ErrUnavailable, got %v", err)
		}
	}
	if r := p.Running(); len(r) != 0 {
		t.Fatalf("a crashed server still counts as running: %v", r)
	}
}
