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

// RequireEnv names the variable that turns a missing server into a
// failure: .ci/run sets it after installing the servers, so that no MCP
// test it provisions for can skip there.
const RequireEnv = "LOOM_REQUIRE_MCP"

// Find returns the installed servers. It skips the test, saying why and
// how to fix it (go test -v shows it), when Node or the install is
// missing; with RequireEnv set it fails instead.
func Find(t testing.TB) Servers {
	t.Helper()
	skip := t.Skipf
	if os.Getenv(RequireEnv) != "" {
		skip = func(format string, args ...any) {
			t.Fatalf(format+" (and "+RequireEnv+" is set: this run must not skip the MCP tests)", args...)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: the MCP tests run real MCP servers from npm (install Node 20, then run bash tools/mcp/testdata/install.sh)")
	}
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "testdata", "servers", "node_modules", ".bin")
	s := Servers{
		Everything: filepath.Join(bin, "mcp-server-everything"),
		Filesystem: filepath.Join(bin, "mcp-server-filesystem"),
	}
	for _, p := range []string{s.Everything, s.Filesystem} {
		if _, err := os.Stat(p); err != nil {
			skip("the MCP test servers are not installed (%v): run bash tools/mcp/testdata/install.sh", err)
		}
	}
	return s
}
