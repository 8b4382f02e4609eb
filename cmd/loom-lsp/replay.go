package main

import (
	"fmt"
	"io"
	"os"

	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

func init() {
	commands["replay"] = subcommand{summary: "print the state machine steps of a session journal, for debugging", run: runReplay}
}

// runReplay is `loom-lsp replay <journal>`: it replays a journal through a
// fresh state machine and prints, for every step, the event, the actions
// and the new state (fsm.Describe).
func runReplay(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("replay", "Usage: loom-lsp replay <journal.jsonl>\n\n"+
		"Replays a conversation journal through a fresh state machine and prints\n"+
		"every step. Journals live in $XDG_STATE_HOME/loom (default\n"+
		"~/.local/state/loom); see README.md, \"Conversation journals\".\n\nFlags:\n")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) != 1 {
		return c.usageError(stderr, "want one journal file, got %d arguments", len(rest))
	}
	path := rest[0]
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp replay: %v\n", err)
		return 1
	}
	defer f.Close()
	if err := journal.Describe(f, stdout); err != nil {
		fmt.Fprintf(stderr, "loom-lsp replay: %s: %v\n", path, err)
		return 1
	}
	return 0
}
