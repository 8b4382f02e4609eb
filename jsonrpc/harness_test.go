package jsonrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// testTimeout bounds every wait of a test, and a whole test's
// environment: generous, since it only ends a test that hangs. (At 20 s,
// TestApprovalRules' nine turns of sandboxed commands and commits did
// not all end in time at load 20.)
const testTimeout = 90 * time.Second

// env is a server and a fake editor connected over net.Pipe.
type env struct {
	t      *testing.T
	ctx    context.Context
	ed     *fakeeditor.Editor
	exit   chan int // receives Serve's exit code
	folder string   // the first workspace folder
}

type envOptions struct {
	cfg     fakeeditor.Config
	script  string         // TOML model script; "" = no model configured
	options map[string]any // extra initializationOptions, merged
	hooks   fakeeditor.Hooks
	noInit  bool
	window  time.Duration
	// callTimeout is Options.ClientCallTimeout; 0 = the default.
	callTimeout time.Duration
	// firstWait is Options.FirstAnswerWait; 0 = the default.
	firstWait time.Duration
	// unresolved keeps the folders as given, symlinks and all, as a real
	// editor sends them.
	unresolved bool
	// stateDir is the host's state directory; "" = a new one (a server
	// started again on the same one finds its journals).
	stateDir string
	// getenv reads the environment (API keys); nil = nothing is set.
	getenv func(string) string
}

func testLogger(testing.TB) *slog.Logger {
	if os.Getenv("LOOM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// hostOptions isolates the host from the user's configuration and state.
func hostOptions(t testing.TB) workspace.HostOptions {
	noUser := filepath.Join(t.TempDir(), "no-user.toml")
	return workspace.HostOptions{
		StateDir: t.TempDir(),
		Config: func(folder string, overrides []config.Override) (config.Config, error) {
			cfg, _, err := config.Load(config.LoadOptions{UserFile: noUser, Folder: folder, Overrides: overrides})
			return cfg, err
		},
		Getenv: func(string) string { return "" },
	}
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	if len(o.cfg.Folders) == 0 {
		o.cfg.Folders = []string{t.TempDir()}
	}
	for i, f := range o.cfg.Folders {
		if o.unresolved {
			break
		}
		r, err := filepath.EvalSymlinks(f)
		if err != nil {
			t.Fatal(err)
		}
		o.cfg.Folders[i] = r
	}
	opts := map[string]any{"tools": map[string]any{"bash": "allow"}, "hooks": map[string]any{"auto_commit": false}}
	if o.script != "" {
		path := filepath.Join(t.TempDir(), "model.toml")
		if err := os.WriteFile(path, []byte(o.script), 0o644); err != nil {
			t.Fatal(err)
		}
		opts["model"] = map[string]any{"provider": "script", "script": path}
	}
	for k, v := range o.options {
		opts[k] = v
	}
	o.cfg.InitializationOptions = opts

	host := hostOptions(t)
	if o.stateDir != "" {
		host.StateDir = o.stateDir
	}
	if o.getenv != nil {
		host.Getenv = o.getenv
	}
	serverEnd, clientEnd := net.Pipe()
	e := &env{t: t, ctx: ctx, exit: make(chan int, 1), folder: o.cfg.Folders[0]}
	go func() {
		e.exit <- Serve(context.Background(), serverEnd, Options{
			Logger: testLogger(t), Version: "test", Host: host, CoalesceWindow: o.window,
			ClientCallTimeout: o.callTimeout, FirstAnswerWait: o.firstWait,
		})
	}()
	e.ed = fakeeditor.Connect(ctx, clientEnd, o.cfg)
	e.ed.Hooks = o.hooks
	t.Cleanup(func() {
		_ = e.ed.Close()
		select {
		case <-e.exit:
		case <-time.After(10 * time.Second):
			t.Errorf("the server did not exit after the client closed")
		}
	})
	if !o.noInit {
		if _, err := e.ed.Initialize(ctx); err != nil {
			t.Fatalf("initialize: %v", err)
		}
	}
	return e
}

// stop closes the client's end and waits until the server has exited
// (a window reload stops loom-lsp so).
func (e *env) stop() {
	e.t.Helper()
	_ = e.ed.Close()
	select {
	case code := <-e.exit:
		e.exit <- code // for the cleanup
	case <-time.After(10 * time.Second):
		e.t.Fatal("the server did not exit after the client closed")
	}
}

// await fails the test unless cond is met before the deadline.
func (e *env) await(what string, cond func([]fakeeditor.Message) bool) {
	e.t.Helper()
	if err := e.ed.Await(e.ctx, what, cond); err != nil {
		e.t.Fatal(err)
	}
}

// ask runs loom.ask and returns its result.
func (e *env) ask(prompt string) AskResult {
	e.t.Helper()
	var res AskResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: prompt}, &res); err != nil {
		e.t.Fatalf("loom.ask: %v", err)
	}
	return res
}

// turnEnded is met once the folder went back to waiting after a busy
// state seen at or after from.
func turnEnded(folder string, from int) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		busy := false
		for i := from; i < len(msgs); i++ {
			if msgs[i].Method != MethodState {
				continue
			}
			var p StateParams
			if json.Unmarshal(msgs[i].Params, &p) != nil || p.Folder != folder {
				continue
			}
			if p.State != "WaitingForUserInput" {
				busy = true
			} else if busy {
				return true
			}
		}
		return false
	}
}

// displayed returns the folder's streamed text of turn, checking seq
// numbers are 1, 2, 3, … across the folder.
func displayed(t *testing.T, msgs []fakeeditor.Message, folder string, turn uint64) string {
	t.Helper()
	var b strings.Builder
	var seq uint64
	for _, m := range msgs {
		if m.Method != MethodDisplayMessage {
			continue
		}
		var p DisplayMessageParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Folder != folder {
			continue
		}
		seq++
		if p.Seq != seq {
			t.Errorf("displayMessage seq %d, want %d", p.Seq, seq)
		}
		if p.Turn == turn && p.Kind != KindThought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func containsText(folder, text string) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		var b strings.Builder
		for _, m := range msgs {
			if m.Method != MethodDisplayMessage {
				continue
			}
			var p DisplayMessageParams
			if json.Unmarshal(m.Params, &p) == nil && p.Folder == folder && p.Kind != KindThought {
				b.WriteString(p.Text)
			}
		}
		return strings.Contains(b.String(), text)
	}
}

func hasMethod(method, substr string) func([]fakeeditor.Message) bool {
	return func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == method && strings.Contains(string(m.Params), substr) {
				return true
			}
		}
		return false
	}
}

func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }
