package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/jsonrpc/acp"
	"github.com/loom-lsp/loom-lsp/secret"
)

const acpUsage = `Usage: loom-lsp acp [flags]

Speaks the Agent Client Protocol (ACP v1: JSON-RPC 2.0, one JSON message
per line) on stdin/stdout, for Zed, the JetBrains IDEs, Emacs agent-shell,
Neovim's CodeCompanion and other ACP clients. Each ACP session is a
conversation of its cwd's workspace folder, with the same tools, git
auto-commit and journal as the LSP daemon. Nothing but JSON-RPC goes to
stdout; logs go to stderr or --log. The process ends when stdin closes.

The model comes from loom.toml (~/.config/loom/loom.toml, then the
folder's .loom.toml); --model and --base-url override it. See README.md,
"ACP: Zed, JetBrains, Emacs, Neovim".

Flags:
`

func init() {
	commands["acp"] = subcommand{summary: "speak the Agent Client Protocol on stdin/stdout (Zed, JetBrains, Emacs, CodeCompanion)", run: runACP}
}

func runACP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("acp", acpUsage)
	fs := c.fs
	var f execFlags
	fs.StringVar(&f.model, "model", "", "model name (overrides [model] name)")
	fs.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible API root (overrides [model] base_url)")
	fs.StringVar(&f.configFile, "config", "", "config file to use instead of ~/.config/loom/loom.toml")
	fs.StringVar(&f.script, "script", "", "use the scripted model in this TOML file (offline; see llm/testdata/README.md)")
	logFile := fs.String("log", "", "write logs to `file` instead of stderr")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn or error (default: warn on stderr, which ACP clients show as errors; info with --log)")
	stateDir := fs.String("state-dir", "", "keep conversation journals in `dir` (default $XDG_STATE_HOME/loom)")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) > 0 {
		return c.usageError(stderr, "unexpected arguments %q (acp takes flags only)", rest)
	}
	if *logLevel == "" {
		*logLevel = "warn"
		if *logFile != "" {
			*logLevel = "info"
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "loom-lsp acp: -log-level: %v\n", err)
		return exitUsage
	}
	layer, err := f.overrides()
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp acp: %v\n", err)
		return exitUsage
	}
	logOut := stderr
	if *logFile != "" {
		file, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "loom-lsp acp: %v\n", err)
			return exitFailed
		}
		defer file.Close()
		logOut = file
	}
	logger := slog.New(slog.NewTextHandler(secret.Default.Writer(logOut), &slog.HandlerOptions{Level: level}))

	// A write to a closed stdout must come back as EPIPE, not kill the
	// process with SIGPIPE before it has killed its tools.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	recoverWorktreesLogged(ctx, logger, *stateDir)
	host := hostOptions(logger, *stateDir)
	host.Config = func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: f.configFile,
			Overrides: append(append([]config.Override(nil), overrides...), layer)})
		return cfg, err
	}
	in, out := protocolStream(stdin, stdout)
	acp.Serve(ctx, in, out, acp.Options{Host: host, Version: buildVersion(), Logger: logger})
	return exitOK
}
