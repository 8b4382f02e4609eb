package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// commandLine is the flag set of one subcommand, with the conventions every
// subcommand shares: -h/--help prints the usage on stdout and exits 0,
// -V/--version prints the version and exits 0, flags may come anywhere
// before "--" (also after positional arguments), and a bad flag gets one
// line saying what is wrong and where to look, on stderr, exit 2.
type commandLine struct {
	fs      *flag.FlagSet
	name    string // "loom-lsp exec"
	usage   string // the text printed before the flags' defaults
	help    bool
	version bool
}

// newCommandLine returns the flag set of subcommand name (e.g. "exec"; ""
// for the top level) with usage as the head of its help.
func newCommandLine(name, usage string) *commandLine {
	full := "loom-lsp"
	if name != "" {
		full += " " + name
	}
	c := &commandLine{fs: flag.NewFlagSet(full, flag.ContinueOnError), name: full, usage: usage}
	c.fs.BoolVar(&c.help, "h", false, "print this help and exit")
	c.fs.BoolVar(&c.help, "help", false, "print this help and exit")
	c.fs.BoolVar(&c.version, "V", false, "print the version and exit")
	c.fs.BoolVar(&c.version, "version", false, "print the version and exit")
	return c
}

// printUsage writes the subcommand's help to w.
func (c *commandLine) printUsage(w io.Writer) {
	fmt.Fprint(w, c.usage)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
}

// parse parses args, flags and positional arguments mixed, up to "--"
// (after which everything is positional). It returns the positional
// arguments, and done with the exit code when the command line was fully
// handled here: help or version printed (0), or a usage error (2).
func (c *commandLine) parse(args []string, stdout, stderr io.Writer) (positional []string, code int, done bool) {
	c.fs.SetOutput(io.Discard) // errors are reported below, in one line
	c.fs.Usage = func() {}
	for {
		if err := c.fs.Parse(args); err != nil {
			fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", c.name, err, c.name)
			return nil, exitUsage, true
		}
		rest := c.fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	switch {
	case c.help:
		c.printUsage(stdout)
		return nil, exitOK, true
	case c.version:
		fmt.Fprintf(stdout, "loom-lsp %s\n", buildVersion())
		return nil, exitOK, true
	}
	return positional, 0, false
}

// usageError prints a usage error of the subcommand on stderr, with where
// to look, and returns exitUsage.
func (c *commandLine) usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", c.name, fmt.Sprintf(format, a...), c.name)
	return exitUsage
}

// isTerminal reports whether f (an *os.File) is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(file.Fd()))
}

// colorAllowed reports whether output to w may use ANSI colour: w is a
// terminal, NO_COLOR is unset or empty (https://no-color.org) and TERM is
// not "dumb".
func colorAllowed(w any) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// flagValue returns the value given to flag name in args ("--name v",
// "--name=v", single or double dash), "" if absent. It is used before the
// flags are parsed, to know the output format of an early failure.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		trimmed := strings.TrimLeft(a, "-")
		if len(a)-len(trimmed) == 0 || len(a)-len(trimmed) > 2 {
			continue
		}
		if v, ok := strings.CutPrefix(trimmed, name+"="); ok {
			return v
		}
		if trimmed == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
