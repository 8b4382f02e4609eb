// Package proctest helps tests check that no child process outlives what
// started it.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LivingInGroup lists the processes of process group pgid that are still
// running, as "pid (comm)". Zombies do not count: a killed orphan stays a
// zombie until init reaps it, and in a container init may never do so.
func LivingInGroup(pgid int) []string {
	var alive []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	want := strconv.Itoa(pgid)
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …"; comm may hold spaces.
		end := bytes.LastIndexByte(b, ')')
		if end < 0 || end+2 > len(b) {
			continue
		}
		f := strings.Fields(string(b[end+2:]))
		if len(f) > 2 && f[2] == want && f[0] != "Z" {
			alive = append(alive, string(b[:end+1]))
		}
	}
	return alive
}

// LivingWithEnv lists the running processes (zombies excluded) whose
// environment holds the entry (exactly "NAME=value"), as "pid (comm)".
// Descendants inherit the environment, so a test that exports a variable
// of its own in a command finds every process the command left, whatever
// its process group or session.
func LivingWithEnv(entry string) []string {
	var alive []string
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, path := range envs {
		env, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		found := false
		for _, e := range bytes.Split(env, []byte{0}) {
			if string(e) == entry {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "stat"))
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(b, ')')
		if end < 0 || end+2 >= len(b) || b[end+2] == 'Z' {
			continue
		}
		alive = append(alive, string(b[:end+1]))
	}
	return alive
}

// OrphanCommand is a shell command that leaves, in every way a shell
// can, a process that outlives it: one in the background, one after
// nohup, one double-forked, one in a new session (setsid -f), one
// daemonised and ignoring SIGTERM and SIGHUP. Each carries the environment
// entry tag ("NAME=value") for LivingWithEnv, and the command writes
// "started" to readyFile once they all run. Then it runs rest.
func OrphanCommand(tag, readyFile, rest string) string {
	return "export " + tag + "; " +
		"sleep 1000 & " +
		"nohup sleep 1000 >/dev/null 2>&1 & " +
		"(sleep 1000 &) ; " +
		"setsid -f sleep 1000 >/dev/null 2>&1; " +
		"(trap '' TERM HUP; setsid sleep 1000 >/dev/null 2>&1 &) ; " +
		"echo started > " + readyFile + "; " + rest
}

// OrphansStarted is how many processes OrphanCommand leaves.
const OrphansStarted = 5

// AwaitWithEnv waits, with a deadline, until n processes with the
// environment entry run (see LivingWithEnv), so that a test checks that
// they are killed rather than never started.
func AwaitWithEnv(t testing.TB, entry string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(LivingWithEnv(entry)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the processes never all ran: %v", LivingWithEnv(entry))
		}
		time.Sleep(10 * time.Millisecond) // polling /proc for processes another process starts
	}
}

// AssertNoneWithEnv fails the test if a process with the environment
// entry runs, and logs how many of OrphansStarted do, after when.
func AssertNoneWithEnv(t testing.TB, entry, when string) {
	t.Helper()
	alive := LivingWithEnv(entry)
	t.Logf("orphans after %s: %d of %d", when, len(alive), OrphansStarted)
	if len(alive) > 0 {
		t.Errorf("after %s, %d processes the command left still run: %v", when, len(alive), alive)
		for _, p := range alive {
			if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL) // do not leave them to the next test
			}
		}
	}
}
