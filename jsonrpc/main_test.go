package jsonrpc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives its tests: the
// server, its sessions and their workers must all be gone.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
