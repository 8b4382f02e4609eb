package main

import (
	"fmt"
	"io"

	"github.com/loom-lsp/loom-lsp/tools/fetch"
	"github.com/loom-lsp/loom-lsp/workspace"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

func init() {
	commands["fetch-cache"] = subcommand{summary: "clear the pages the fetch tool keeps (fetch-cache clear)", run: runFetchCache}
}

// runFetchCache clears the fetch tool's page cache.
func runFetchCache(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := newCommandLine("fetch-cache", "Usage: loom-lsp fetch-cache clear\n\n"+
		"Removes every page the fetch tool kept for revalidation (in loom's state directory).\n\nFlags:\n")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(rest) != 1 || rest[0] != "clear" {
		return c.usageError(stderr, `want "clear"`)
	}
	dir, err := journal.DefaultStateDir()
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp fetch-cache: %v\n", err)
		return exitFailed
	}
	cache := fetch.NewCache(workspace.FetchCacheDir(dir), 0)
	n, err := cache.Clear()
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp fetch-cache: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "removed %d cached pages from %s\n", n, cache.Dir())
	return 0
}
