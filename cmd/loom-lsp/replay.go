package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/loom-lsp/loom-lsp/workspace"
)

func init() {
	commands["replay"] = subcommand{summary: "print the state machine steps of a session journal, for debugging", run: runReplay}
}

// runReplay is `loom-lsp replay <journal>`: it replays a journal through a
// fresh state machine and prints, for every step, the event, the actions
// and the new state (fsm.Describe).
func runReplay(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: loom-lsp replay <journal.jsonl>\n\nJournals live in $XDG_STATE_HOME/loom (default ~/.local/state/loom).\n")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp replay: %v\n", err)
		return 1
	}
	defer f.Close()
	if err := workspace.DescribeJournal(f, stdout); err != nil {
		fmt.Fprintf(stderr, "loom-lsp replay: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	return 0
}
