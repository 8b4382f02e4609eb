// Command loom-lsp is a coding agent that lives inside the editor: an LSP
// server over stdio (the default subcommand, serve) hosting one agent
// session per workspace folder.
//
// Subcommands register themselves in [commands], one file each (serve.go,
// version.go; exec, demo, replay and acp are added the same way).
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// subcommand is one loom-lsp subcommand.
type subcommand struct {
	// summary is the one-line description shown by loom-lsp --help.
	summary string
	// run runs the subcommand with its arguments (after the subcommand's
	// name) and returns the process exit code. stdout is the protocol or
	// output stream; messages for humans go to stderr.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands holds the subcommands by name. Each subcommand file adds its
// entry in an init function:
//
//	func init() { commands["exec"] = subcommand{summary: "...", run: runExec} }
var commands = map[string]subcommand{}

// defaultCommand runs when the first argument is not a subcommand name.
const defaultCommand = "serve"

func main() {
	atExit := setupProcess(os.Args[1:], os.Stderr)
	profile := startMemProfile(os.Stderr)
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	profile()
	atExit()
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			usage(stdout)
			return exitOK
		case "help":
			if len(args) > 1 {
				if c, ok := commands[args[1]]; ok {
					return c.run([]string{"--help"}, stdin, stdout, stderr)
				}
			}
			usage(stdout)
			return exitOK
		case "-V", "-version", "--version":
			fmt.Fprintf(stdout, "loom-lsp %s\n", buildVersion())
			return exitOK
		}
		if c, ok := commands[args[0]]; ok {
			return c.run(args[1:], stdin, stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "loom-lsp: unknown subcommand %q\n\n", args[0])
			usage(stderr)
			return 2
		}
	}
	return commands[defaultCommand].run(args, stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: loom-lsp [subcommand] [flags]\n\n"+
		"A coding agent that lives inside the editor. Run bare, it is an LSP server\n"+
		"on stdin/stdout, meant to be started by an editor; 'loom-lsp demo' shows it\n"+
		"at work offline, and 'loom-lsp exec \"PROMPT\"' runs one turn in a terminal.\n\nSubcommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		def := ""
		if n == defaultCommand {
			def = " (default)"
		}
		fmt.Fprintf(w, "  %-8s %s%s\n", n, commands[n].summary, def)
	}
	fmt.Fprintf(w, "\nFlags:\n  -h, --help     print this help (or 'loom-lsp <subcommand> --help' for its flags)\n"+
		"  -V, --version  print the version\n")
}
