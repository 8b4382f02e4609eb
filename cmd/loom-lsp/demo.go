package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
	"github.com/loom-lsp/loom-lsp/jsonrpc/headless"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

//go:embed demo.toml
var demoScript []byte

const demoUsage = `Usage: loom-lsp demo [--keep]

Shows what loom-lsp does, end to end, offline: it makes a small git project
in a temporary folder and runs a scripted model through the real state
machine, tools and git auto-commit. The model reads a file, edits it, runs
the project's test, and answers; the hook commits the edit. No key, no
server, nothing outside the temporary folder is touched.

Flags:
`

// demoProject is the small project the demo works on.
var demoProject = map[string]string{
	"greet.sh": `#!/bin/sh
# Prints a greeting for the name given (default: world).
name="${1:-world}"
echo "hello $name"
`,
	"test.sh": `#!/bin/sh
# The project's test: greet.sh must greet loom politely.
out=$(sh greet.sh loom)
if [ "$out" = "Hello, loom!" ]; then echo PASS; else echo "FAIL: got '$out'"; exit 1; fi
`,
	"README.md": "# greet\n\nA tiny greeting script, for the loom-lsp demo.\n",
}

func init() {
	commands["demo"] = subcommand{summary: "see loom-lsp work, offline, on a scripted model", run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return interruptible(func(ctx context.Context) int { return runDemo(ctx, args, stdout, stderr) })
	}}
}

// runDemo implements `loom-lsp demo`.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommandLine("demo", demoUsage)
	keep := c.fs.Bool("keep", false, "keep the temporary project and print where it is")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) > 0 {
		return c.usageError(stderr, "unexpected argument %q (demo takes no arguments)", rest[0])
	}
	tmp, err := os.MkdirTemp("", "loom-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp demo: %v\n", err)
		return exitFailed
	}
	if *keep {
		defer fmt.Fprintf(stdout, "\nThe demo project is kept in %s\n", filepath.Join(tmp, "greet"))
	} else {
		defer os.RemoveAll(tmp)
	}
	project := filepath.Join(tmp, "greet")
	if err := makeDemoProject(ctx, project); err != nil {
		fmt.Fprintf(stderr, "loom-lsp demo: setting up the project: %v\n", err)
		return exitFailed
	}
	script, err := llm.ParseScript(demoScript)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp demo: the embedded script: %v\n", err)
		return exitFailed
	}
	prompt := "Make greet.sh greet people politely, so that test.sh passes."
	fmt.Fprintf(stdout, "loom-lsp demo: a scripted model works on a small git project in %s\n\n", project)
	fmt.Fprintf(stdout, "you> %s\n\nloom> ", prompt)

	editor := headless.New(headless.Options{Format: headless.Text, Out: stdout, Log: stdout, Color: colorAllowed(stdout)})
	host := workspace.NewHost(workspace.HostOptions{
		Editor: editor,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Provider, cfg.Model.Name = config.ProviderScript, "demo-script"
			cfg.Tools.Bash = config.PolicyAllow
			return cfg, nil
		},
		Provider:        func(config.Config, func(string) string) (llm.Provider, error) { return script, nil },
		StateDir:        filepath.Join(tmp, "state"),
		Logger:          slog.New(slog.DiscardHandler), // everything worth telling is notified
		NewConversation: true,
	})
	code = headlessTurn{host: host, editor: editor, stdout: stdout, folder: project, prompt: prompt, stderr: stderr}.run(ctx)
	if code != exitOK {
		fmt.Fprintf(stderr, "loom-lsp demo: the scripted turn did not finish (exit %d)\n", code)
		return code
	}
	fmt.Fprintln(stdout, "\n── the agent's commit ──")
	show, err := gitOutput(ctx, project, "show", "--stat", "--patch", "--format=commit %H%nAuthor: %an <%ae>%n%n%B", "HEAD")
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp demo: %v\n", err)
		return exitFailed
	}
	fmt.Fprint(stdout, show)
	fmt.Fprintln(stdout, "── git log ──")
	log, _ := gitOutput(ctx, project, "log", "--oneline")
	fmt.Fprint(stdout, log)
	fmt.Fprint(stdout, `
That was a scripted model. To use a real one, create ~/.config/loom/loom.toml:

  [model]
  base_url = "http://localhost:11434/v1"   # Ollama; or https://api.openai.com/v1 with OPENAI_API_KEY set
  name = "qwen2.5-coder"

then run 'loom-lsp exec --approve bash=allow "your request"' in a project (exec
cannot ask before a command: --approve bash=allow lets the agent run them), or
connect your editor (see README.md: VS Code, Neovim, Helix, any LSP client).
`)
	return exitOK
}

// makeDemoProject writes the demo project and commits it.
func makeDemoProject(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range demoProject {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "loom demo"},
		{"config", "user.email", "demo@loom-lsp.invalid"},
		{"add", "-A"},
		{"commit", "-q", "-m", "greet: first version"},
	} {
		if _, err := gitOutput(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := gitcmd.Command(ctx, dir, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
