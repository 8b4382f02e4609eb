package journal

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestHelperLockHolder takes a journal's lock, starts a process that
// keeps a copy of the lock's descriptor (as a child forked at the moment
// the daemon is killed does, until it execs), prints that process's pid,
// and waits to be killed.
func TestHelperLockHolder(t *testing.T) {
	if os.Getenv("LOOM_TEST_HELPER") != "lockholder" {
		t.Skip("helper process")
	}
	lock, err := Lock(os.Getenv("LOOM_JOURNAL"))
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "1000")
	child.ExtraFiles = []*os.File{lock.f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
	select {} // until killed
}

// A daemon killed while a descendant still holds a copy of its journal
// lock's descriptor does not keep the journal locked: the next daemon
// takes it and resumes the conversation. (With flock, the copy kept the
// lock alive, and TestJournalSurvivesKill9 failed under load when the
// kill landed while the session was starting git.) Another living process
// still holds the journal.
func TestJournalLockDiesWithItsProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLockHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOOM_TEST_HELPER=lockholder", "LOOM_JOURNAL="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	keeper, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	defer syscall.Kill(keeper, syscall.SIGKILL) // a child of the dead helper by then

	if _, err := Lock(path); err != ErrBusy {
		t.Fatalf("while the helper lives: Lock = %v, want busy", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err := syscall.Kill(keeper, 0); err != nil {
		t.Fatalf("the descriptor's keeper is gone already (%v): the test proves nothing", err)
	}
	lock, err := Lock(path)
	if err != nil {
		t.Fatalf("after kill -9 of the holder, with a copy of its descriptor alive: %v", err)
	}
	lock.Release()
}
