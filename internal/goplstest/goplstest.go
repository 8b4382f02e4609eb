// Package goplstest finds gopls for the tests that run a real language
// server.
package goplstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Version is the gopls .ci/run installs (v0.24 needs Go 1.27).
const Version = "v0.23.0"

// Path finds gopls on PATH or in $(go env GOPATH)/bin, where .ci/run
// installs it. Without it the test is skipped, saying why, unless
// LOOM_REQUIRE_GOPLS is set (as .ci/run sets it): then it fails.
func Path(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "gopls")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("LOOM_REQUIRE_GOPLS") != "" {
		tb.Fatal("gopls is not installed, and LOOM_REQUIRE_GOPLS is set: go install golang.org/x/tools/gopls@" + Version)
	}
	tb.Skip("gopls is not installed (go install golang.org/x/tools/gopls@" + Version + "); CI installs it")
	return ""
}
