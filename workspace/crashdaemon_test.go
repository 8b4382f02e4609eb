package workspace

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The crash tests run a daemon in a process of its own (this test binary
// again, running one helper test), wait until it reaches the point where
// it must die — it writes a line to a FIFO there (from a git hook, or a
// git wrapper) — and kill it with SIGKILL, with everything it started.
// Then they resume in this process and check what the journal made of it.

// newFIFO makes a FIFO in a temporary directory.
func newFIFO(t *testing.T, name string) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// killDaemonAt starts the helper test helper (environment env added to
// this process's), waits up to wait for a line on fifo, then kills the
// helper's process group with SIGKILL and reaps it. what names the point
// the helper failed to reach, for the failure.
func killDaemonAt(t *testing.T, helper, fifo string, env []string, wait time.Duration, what string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	}()
	reached := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the helper opens it
		if err == nil {
			_, err = bufio.NewReader(f).ReadString('\n')
			f.Close()
		}
		reached <- err
	}()
	select {
	case err := <-reached:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		os.WriteFile(fifo, nil, 0) // unblock the reader
		t.Fatal("the helper daemon never reached " + what)
	}
	// The daemon and what it ran, at once.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
}
