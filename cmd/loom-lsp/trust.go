package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
)

// execTrustHow is how a user of `loom-lsp exec` trusts a folder.
const execTrustHow = "run `loom-lsp trust` in this folder"

func init() {
	commands["trust"] = subcommand{summary: "trust a folder with its current settings (its .loom.toml may then widen what the agent does)", run: runTrust}
}

// runTrust records the folder (default: the current directory) as
// trusted with the widening values of its .loom.toml as they are now, as
// loom.trust does in an editor.
func runTrust(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("trust", "Usage: loom-lsp trust [FOLDER]\n\n"+
		"Trusts FOLDER (default: the current directory) with its settings as they are now: its .loom.toml may then choose\n"+
		"the model server and its key, allow commands, start MCP servers and raise what a turn may cost. If those settings\n"+
		"change later (a command, a git pull), they are ignored again until you trust the folder again.\n\nFlags:\n")
	configFile := c.fs.String("config", "", "config file to use instead of ~/.config/loom/loom.toml")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) > 1 {
		return c.usageError(stderr, "unexpected arguments %q", rest[1:])
	}
	folder := "."
	if len(rest) == 1 {
		folder = rest[0]
	}
	folder, err := filepath.Abs(folder)
	if err == nil {
		_, err = os.Stat(folder)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp trust: %v\n", err)
		return exitUsage
	}
	cfg, _, loadErr := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: *configFile})
	if err := config.TrustFolder(config.DefaultTrustFile(), folder, cfg.ContentHash()); err != nil {
		fmt.Fprintf(stderr, "loom-lsp trust: %v\n", err)
		return exitFailed
	}
	// And its agent hooks as they are now, with the files they run.
	userDir := filepath.Dir(config.DefaultTrustFile())
	real := folder
	if r, err := filepath.EvalSymlinks(folder); err == nil {
		real = r
	}
	hooks, _ := agenthooks.Load(real, os.Getenv("HOME"), userDir)
	if err := agenthooks.RecordTrusted(agenthooks.TrustFile(userDir), real, hooks.Fingerprints(real)); err != nil {
		fmt.Fprintf(stderr, "loom-lsp trust: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "trusted %s with its current settings (recorded in %s)\n", folder, config.DefaultTrustFile())
	if n := len(hooks.Fingerprints(real)); n > 0 {
		fmt.Fprintf(stdout, "and its %d agent hook(s) as they are now, with the files they run\n", n)
	}
	if loadErr != nil {
		fmt.Fprintf(stderr, "loom-lsp trust: note: the configuration has errors: %v\n", loadErr)
	}
	return exitOK
}
