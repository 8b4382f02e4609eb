package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/proctest"
)

// orphanTag is an environment entry of this test's own, which every
// process a command leaves inherits; proctest.LivingWithEnv counts them.
func orphanTag(t *testing.T) string {
	return "LOOM_ORPHAN_TEST=" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(t.TempDir())
}

func awaitOrphans(t *testing.T, tag string) { proctest.AwaitWithEnv(t, tag, proctest.OrphansStarted) }

func assertNoOrphans(t *testing.T, tag, when string) { proctest.AssertNoneWithEnv(t, tag, when) }

func TestBashLeavesNoOrphanAtTheEndOfTheCall(t *testing.T) {
	env, tag := newEnv(t), orphanTag(t)
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := proctest.OrphanCommand(tag, ready, "true")
	mustOK(t, run(t, Bash{}, env, map[string]any{"command": cmd}))
	if _, err := os.Stat(ready); err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	assertNoOrphans(t, tag, "the end of the call")
}

func TestBashLeavesNoOrphanOnCancel(t *testing.T) {
	env, tag := newEnv(t), orphanTag(t)
	ready := filepath.Join(t.TempDir(), "ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		args := `{"command": ` + strconv.Quote(proctest.OrphanCommand(tag, ready, "sleep 1000")) + `}`
		_, err := Bash{}.Run(ctx, env, []byte(args))
		done <- err
	}()
	awaitOrphans(t, tag)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want cancelled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("bash did not return after cancel")
	}
	assertNoOrphans(t, tag, "cancel")
}

func TestBashLeavesNoOrphanOnTimeout(t *testing.T) {
	env, tag := newEnv(t), orphanTag(t)
	ready := filepath.Join(t.TempDir(), "ready")
	env.BashTimeout = 3 * time.Second
	res := run(t, Bash{}, env, map[string]any{"command": proctest.OrphanCommand(tag, ready, "sleep 1000")})
	mustToolError(t, res, "timed out")
	if _, err := os.Stat(ready); err != nil {
		t.Fatalf("the command did not start its orphans before the timeout: %v", err)
	}
	assertNoOrphans(t, tag, "the timeout")
}
