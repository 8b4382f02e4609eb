package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/residency"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/tools/reap"
)

// daemonCommands are the subcommands that run agent sessions, and so
// hold an API key and start tools' processes.
var daemonCommands = map[string]bool{"serve": true, "exec": true, "acp": true, "demo": true}

// setupProcess prepares the process before a subcommand runs, and returns
// what to do before it exits. For the subcommands that run sessions:
//
//   - the API keys (every *_API_KEY variable, and the one the user's
//     config names) move from the environment into memory, so that a tool's
//     process cannot read them in /proc/$PPID/environ;
//   - the process becomes non-dumpable, so that the other processes of the
//     user cannot read its /proc/PID/environ or memory (root still can);
//   - it becomes a child subreaper, and starts a watchdog, so that no
//     process a tool started outlives its call or the daemon.
//
// It runs the watchdog itself when args ask for it.
func setupProcess(args []string, stderr io.Writer) (atExit func()) {
	reap.RunWatchdogIf(args)
	name := defaultCommand
	if len(args) > 0 && commands[args[0]].run != nil {
		name = args[0]
	}
	if !daemonCommands[name] {
		return func() {}
	}
	user, _, _ := config.Load(config.LoadOptions{})
	secret.TakeKeys(user.Model.APIKeyEnv)
	var problems []error
	problems = append(problems, secret.HideProcess(), reap.BecomeSubreaper(), reap.StartWatchdog())
	for _, err := range problems {
		if err != nil {
			fmt.Fprintf(stderr, "loom-lsp: warning: %v\n", err)
		}
	}
	if name == "serve" || name == "acp" {
		// A long-lived daemon: once it has started, give back the pages
		// of the binary that starting mapped (see internal/residency).
		time.AfterFunc(releaseImageAfter, func() { _, _ = residency.ReleaseImage() })
	}
	return func() { reap.KillMarked(reap.DaemonPrefix(os.Getpid()), true) }
}

// releaseImageAfter is when a daemon gives back the pages of its binary
// that its start mapped: past the start (configuration, folders,
// watchers), before anyone looks at an idle editor's processes.
const releaseImageAfter = 3 * time.Second
