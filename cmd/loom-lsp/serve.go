package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace"
)

func init() {
	commands["serve"] = subcommand{summary: "speak LSP on stdin/stdout", run: runServe}
}

// stdio joins stdin and stdout into the connection the server speaks on.
type stdio struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (s stdio) Close() error {
	for _, c := range s.closers {
		_ = c.Close()
	}
	return nil
}

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("serve", "Usage: loom-lsp [serve] [flags]\n\n"+
		"Speaks the Language Server Protocol on stdin/stdout and hosts one agent\n"+
		"session per workspace folder. Nothing but protocol frames goes to stdout.\n"+
		"It is meant to be started by an editor (see README.md); to try loom-lsp in\n"+
		"a terminal, run 'loom-lsp demo' or 'loom-lsp exec \"PROMPT\"'.\n\nFlags:\n")
	fs := c.fs
	logFile := fs.String("log", "", "write logs to `file` instead of stderr")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	stateDir := fs.String("state-dir", "", "keep session journals in `dir` (default $XDG_STATE_HOME/loom)")
	maxMessage := fs.Int("max-message-size", jsonrpc.DefaultMaxMessageSize, "largest incoming message, in `bytes`")
	transport := addTransportFlags(fs)
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) > 0 {
		return c.usageError(stderr, "unexpected arguments %q (serve takes flags only)", rest)
	}
	if err := transport.check(); err != nil {
		fmt.Fprintf(stderr, "loom-lsp serve: %v\n", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "loom-lsp serve: -log-level: %v\n", err)
		return 2
	}
	logOut := stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "loom-lsp serve: %v\n", err)
			return 1
		}
		defer f.Close()
		logOut = f
	}
	// API keys are masked in every log line (secret.Default holds them).
	logger := slog.New(slog.NewTextHandler(secret.Default.Writer(logOut), &slog.HandlerOptions{Level: level}))
	if isTerminal(stdin) {
		// Someone typed loom-lsp in a terminal: say what this is, once,
		// and keep serving (a person may still paste LSP frames).
		fmt.Fprintln(stderr, "loom-lsp: this is an LSP server, meant to be started by an editor; it now waits for LSP messages on stdin (Ctrl-D ends it). To try it in a terminal: 'loom-lsp demo', 'loom-lsp exec \"PROMPT\"', or 'loom-lsp --help'.")
	}

	// A write to a closed stdout must come back as EPIPE (and end the
	// server cleanly), not kill the process with SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	recoverWorktreesLogged(ctx, logger, *stateDir)
	stdin = interruptibleInput(stdin)
	in, out := protocolStream(stdin, stdout)
	conn := stdio{Reader: in, Writer: out}
	for _, c := range []any{stdin, stdout} {
		if cl, ok := c.(io.Closer); ok {
			conn.closers = append(conn.closers, cl)
		}
	}
	return jsonrpc.Serve(ctx, conn, jsonrpc.Options{
		Logger:         logger,
		Version:        buildVersion(),
		MaxMessageSize: *maxMessage,
		Host:           hostOptions(logger, *stateDir),
	})
}

// transportFlags are the flags LSP client libraries add to a server's
// command line to choose a transport (vscode-languageclient passes
// --stdio, and --clientProcessId=N for some transports). loom-lsp speaks
// over stdio only: --stdio and --clientProcessId are accepted and the
// other transports are refused with a message saying so.
type transportFlags struct {
	stdio           *bool
	nodeIPC         *bool
	socket          *string
	pipe            *string
	clientProcessID *int
}

func addTransportFlags(fs *flag.FlagSet) transportFlags {
	return transportFlags{
		stdio:           fs.Bool("stdio", false, "speak over stdin/stdout (the default and only transport; accepted for LSP clients that pass it)"),
		nodeIPC:         fs.Bool("node-ipc", false, "not supported: loom-lsp speaks over stdio only"),
		socket:          fs.String("socket", "", "not supported: loom-lsp speaks over stdio only"),
		pipe:            fs.String("pipe", "", "not supported: loom-lsp speaks over stdio only"),
		clientProcessID: fs.Int("clientProcessId", 0, "the client's process id (accepted and ignored; the server ends when stdin closes)"),
	}
}

// check refuses the transports loom-lsp does not speak.
func (t transportFlags) check() error {
	var asked string
	switch {
	case *t.nodeIPC:
		asked = "--node-ipc"
	case *t.socket != "":
		asked = "--socket"
	case *t.pipe != "":
		asked = "--pipe"
	default:
		return nil
	}
	return fmt.Errorf("%s is not supported: loom-lsp speaks LSP over stdio only; configure your client's transport as stdio", asked)
}

// hostOptions are the workspace.HostOptions of a real run: default config
// loading and providers, journals in stateDir.
func hostOptions(logger *slog.Logger, stateDir string) workspace.HostOptions {
	return workspace.HostOptions{Logger: logger, StateDir: stateDir}
}
