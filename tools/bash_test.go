package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/reap"
)

// becomeSubreaper makes this test process adopt orphaned descendants, so
// that the test can wait (block) for a killed background process to die
// instead of polling for it.
var becomeSubreaper = sync.OnceValue(reap.BecomeSubreaper)

// waitGone blocks until the orphan pid has died (it must have been
// killed; nothing else ends a `sleep 100`), then checks that its process
// group pgid has no member left.
func waitGone(t *testing.T, pgid, pid int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			// Bash reaped it already (package reap), so it is gone.
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d", pid)); serr == nil {
				err = fmt.Errorf("pid %d is not our child, yet it exists", pid)
			} else {
				err = nil
			}
			done <- err
			return
		}
		if err == nil && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
			err = fmt.Errorf("pid %d ended with %v, not SIGKILL", pid, ws)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("background pid %d survived", pid)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process group %d still exists: kill(-pgid, 0) = %v", pgid, err)
	}
}

// pids parses "PGID PID" from the first line of s that has two numbers.
func pids(t *testing.T, s string) (pgid, pid int) {
	t.Helper()
	for line := range strings.Lines(s) {
		if _, err := fmt.Sscanf(line, "%d %d", &pgid, &pid); err == nil {
			return pgid, pid
		}
	}
	t.Fatalf("no pids in %q", s)
	return 0, 0
}

func TestBashBasics(t *testing.T) {
	env := newEnv(t)
	res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "pwd; echo err >&2; exit 3"}))
	if !strings.HasPrefix(res.Text, env.Root+"\nerr\n") || !strings.Contains(res.Text, "(exit code 3,") {
		t.Errorf("text = %q", res.Text)
	}
	if res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "true"})); !strings.HasPrefix(res.Text, "(no output)\n(exit code 0,") {
		t.Errorf("text = %q", res.Text)
	}
	if res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "kill -TERM $$"})); !strings.Contains(res.Text, "killed by signal terminated") {
		t.Errorf("text = %q", res.Text)
	}
	mustToolError(t, run(t, Bash{}, env, map[string]any{"command": "  "}), "empty")
	mustToolError(t, run(t, Bash{}, env, map[string]any{"cmd": "ls"}), "invalid arguments")
	env.BashMaxTimeout = time.Minute
	if res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "echo hi", "timeout": 3600})); !strings.Contains(res.Text, "lowered to the maximum, 1m0s") {
		t.Errorf("text = %q", res.Text)
	}
}

func TestBashTimeoutKillsTree(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Skipf("cannot become a subreaper: %v", err)
	}
	env := newEnv(t)
	env.BashTimeout = 500 * time.Millisecond
	res := run(t, Bash{}, env, map[string]any{"command": `sleep 100 & echo "$$ $!"; sleep 100`})
	mustToolError(t, res, "timed out after 500ms")
	pgid, pid := pids(t, res.Text)
	waitGone(t, pgid, pid)
}

func TestBashCancelMidRun(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Skipf("cannot become a subreaper: %v", err)
	}
	env := newEnv(t)
	fifo := filepath.Join(env.Root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan string, 1)
	go func() {
		data, err := os.ReadFile(fifo) // returns once the command wrote it
		if err != nil {
			data = []byte(err.Error())
		}
		started <- string(data)
		cancel()
	}()
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Bash{}.Run(ctx, env, []byte(`{"command": "sleep 100 & echo \"$$ $!\" > fifo; sleep 100"}`))
		done <- out{res, err}
	}()
	var o out
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("bash did not return after cancel")
	}
	if !errors.Is(o.err, context.Canceled) || !strings.Contains(o.res.Text, "cancelled") {
		t.Fatalf("Run = %+v, %v", o.res, o.err)
	}
	pgid, pid := pids(t, <-started)
	waitGone(t, pgid, pid)
}

func TestBashBackgroundJobDoesNotSurvive(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Skipf("cannot become a subreaper: %v", err)
	}
	env := newEnv(t)
	res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": `sleep 100 >/dev/null 2>&1 & echo "$$ $!"`}))
	pgid, pid := pids(t, res.Text)
	waitGone(t, pgid, pid)
}

func TestBashOutputCapped(t *testing.T) {
	env := newEnv(t)
	env.MaxOutputBytes = 10_000
	res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "seq 1 1000000"}))
	if len(res.Text) > 10_200 {
		t.Errorf("output not capped: %d bytes", len(res.Text))
	}
	if !strings.HasPrefix(res.Text, "1\n2\n3\n") || !strings.Contains(res.Text, "999999\n1000000\n(exit code 0") {
		t.Errorf("head or tail lost: %q … %q", res.Text[:20], res.Text[len(res.Text)-60:])
	}
	total := 0
	for i := 1; i <= 1000000; i++ {
		total += len(strconv.Itoa(i)) + 1
	}
	if !strings.Contains(res.Text, fmt.Sprintf("bytes of output cut; %d bytes in all", total)) {
		t.Errorf("no cut note in %q", res.Text[4990:5100])
	}
}

func TestHeadTail(t *testing.T) {
	w := newHeadTail(10)
	for _, s := range []string{"ab", "cdefg", "hijklmnop", "q", "rstuvwxyz"} {
		w.Write([]byte(s))
	}
	if got := w.String(); got != "abcde\n[… 16 bytes of output cut; 26 bytes in all …]\nvwxyz" {
		t.Errorf("headTail = %q", got)
	}
	w = newHeadTail(10)
	w.Write([]byte("short"))
	if got := w.String(); got != "short" {
		t.Errorf("headTail = %q", got)
	}
}

func TestBashScrubsAPIKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-openai-secret")
	t.Setenv("anthropic_api_key", "sk-lower-secret")
	t.Setenv("LOOM_MODEL_TOKEN", "custom-secret")
	t.Setenv("LOOM_VISIBLE", "visible-value")
	env := newEnv(t)
	env.ScrubEnv = []string{"LOOM_MODEL_TOKEN"}
	res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": "env"}))
	if !strings.Contains(res.Text, "LOOM_VISIBLE=visible-value") {
		t.Fatalf("environment not passed: %q", res.Text)
	}
	for _, secret := range []string{"sk-openai-secret", "sk-lower-secret", "custom-secret"} {
		if strings.Contains(res.Text, secret) {
			t.Errorf("the command saw %s", secret)
		}
	}
}
