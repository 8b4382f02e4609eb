package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build info.
var version = ""

func init() {
	commands["version"] = subcommand{summary: "print the version", run: runVersion}
}

// buildVersion returns the version of this binary.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("version", "Usage: loom-lsp version\n\nPrints the version of loom-lsp (also: loom-lsp --version, -V).\n\nFlags:\n")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) > 0 {
		return c.usageError(stderr, "unexpected arguments %q", rest)
	}
	fmt.Fprintf(stdout, "loom-lsp %s\n", buildVersion())
	return exitOK
}
