// Package mcptest finds the real MCP servers the tests run:
// @modelcontextprotocol/server-everything and server-filesystem, pinned in
// tools/mcp/testdata/servers and installed there by
// tools/mcp/testdata/install.sh (which .ci/run calls).
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Servers are the installed test servers' executables (absolute paths).
type Servers struct {
	// Everything is mcp-server-everything (stdio by default).
	Everything string
	// Filesystem is mcp-server-filesystem; its arguments are the allowed
	// directories.
	Filesystem string
}

// Find returns the installed servers. It skips the test, saying why and
// how to fix it, when Node or the install is missing; CI runs the install
// script first, which fails loudly, so CI never skips.
func Find(t testing.TB) Servers {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: the MCP tests run real MCP servers from npm (install Node 20, then run bash tools/mcp/testdata/install.sh)")
	}
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "testdata", "servers", "node_modules", ".bin")
	s := Servers{
		Everything: filepath.Join(bin, "mcp-server-everything"),
		Filesystem: filepath.Join(bin, "mcp-server-filesystem"),
	}
	for _, p := range []string{s.Everything, s.Filesystem} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the MCP test servers are not installed (%v): run bash tools/mcp/testdata/install.sh", err)
		}
	}
	return s
}
