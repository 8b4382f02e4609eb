// Package mcptest finds the real MCP servers the tests run:
// @modelcontextprotocol/server-everything and server-filesystem, pinned in
// tools/mcp/testdata/servers and installed there by
// tools/mcp/testdata/install.sh (which .ci/run calls).
package mcptest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// OAuthServer is the official TypeScript SDK's example MCP server
// (examples/server/simpleStreamableHttp.js) started with --oauth: an
// OAuth-protected streamable HTTP server on localhost and its in-memory
// authorization server (demoInMemoryOAuthProvider.js: metadata, dynamic
// registration, an authorize endpoint that signs the demo user in and
// redirects at once, PKCE-checked tokens, introspection).
type OAuthServer struct {
	// URL is the MCP endpoint (http://localhost:PORT/mcp); Issuer is the
	// authorization server's.
	URL, Issuer string
	// Output is what the server printed so far.
	Output func() string
}

// StartOAuth starts the example OAuth server (with --oauth-strict when
// strict: tokens must be issued for its URL) and waits until both its
// servers listen. It is stopped when the test ends.
func StartOAuth(t testing.TB, strict bool) *OAuthServer {
	t.Helper()
	Find(t)
	_, file, _, _ := runtime.Caller(0)
	servers := filepath.Join(filepath.Dir(file), "..", "testdata", "servers")
	script := filepath.Join(servers, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the TypeScript SDK's example server is not installed (%v): run bash tools/mcp/testdata/install.sh", err)
	}
	mcpPort, authPort := freePort(t), freePort(t)
	args := []string{script, "--oauth"}
	if strict {
		args = append(args, "--oauth-strict")
	}
	cmd := exec.Command("node", args...)
	cmd.Dir = servers
	cmd.Env = append(os.Environ(), "MCP_PORT="+mcpPort, "MCP_AUTH_PORT="+authPort)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(out, pw), out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the example OAuth server: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		pw.Close()
	})
	ready := make(chan struct{})
	go func() {
		// Reads to the end, so the server never blocks on its stdout.
		r := bufio.NewReader(pr)
		n := 0
		for {
			line, err := r.ReadString('\n')
			if strings.Contains(line, "listening on port") {
				if n++; n == 2 {
					close(ready)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("the example OAuth server did not come up in 60 s; it printed:\n%s", out.String())
	}
	return &OAuthServer{URL: "http://localhost:" + mcpPort + "/mcp", Issuer: "http://localhost:" + authPort + "/", Output: out.String}
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
