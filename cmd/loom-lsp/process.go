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
		// A long-lived daemon: once it is quiet, give back the pages of
		// the binary that starting (or later work) mapped (see
		// internal/residency). Its protocol stream is wrapped by
		// protocolStream, which counts as traffic.
		daemonQuiet = residency.NewQuiet(releaseImageAfter, releaseImageLater, func() { _, _ = residency.ReleaseImage() })
	}
	return func() {
		daemonQuiet.Stop()
		reap.KillMarked(reap.DaemonPrefix(os.Getpid()), true)
	}
}

// releaseImageAfter is how long a daemon's protocol stream must be quiet
// after its start (configuration, folders, watchers; the editor's first
// requests) before it gives back the pages of its binary that starting
// mapped; releaseImageLater the same for each later time it is left
// alone after traffic. Quiet, not a time after the start: on a loaded
// machine a start runs longer than any fixed time, and what it maps
// after a release stays.
const (
	releaseImageAfter = 3 * time.Second
	releaseImageLater = 30 * time.Second
)

// daemonQuiet is the release clock of a serve or acp process started by
// main (nil in tests that call run in-process).
var daemonQuiet *residency.Quiet

// protocolStream is the daemon's protocol stream, each byte of which is
// traffic for daemonQuiet.
func protocolStream(in io.Reader, out io.Writer) (io.Reader, io.Writer) {
	return daemonQuiet.Reader(in), daemonQuiet.Writer(out)
}
