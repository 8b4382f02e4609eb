// Package reap keeps the processes a tool starts from outliving the tool
// call, or the daemon.
//
// A command can leave processes that escape its process group: `setsid -f`,
// a double fork, `nohup … &`. To find them, every process a tool starts
// carries a marker in its environment ([MarkerVar]=<daemon pid>-<call>),
// which its descendants inherit and which /proc/PID/environ shows. When a
// call ends (done, cancelled, timed out), [KillMarked] kills every process
// carrying the call's marker and reaps those that were re-parented to the
// daemon; the daemon makes itself a child subreaper ([BecomeSubreaper]) so
// that orphans come to it rather than to init. When the daemon dies,
// however it dies (even SIGKILL), a watchdog process ([StartWatchdog])
// kills whatever carries one of its markers.
//
// What escapes: a process that clears or rewrites its environment (env -i,
// exec with a new environment), and one whose /proc/PID/environ the daemon
// cannot read (setuid programs such as sudo).
package reap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// MarkerVar is the environment variable that marks the processes of one
// tool call.
const MarkerVar = "LOOM_TOOL_CALL"

var calls atomic.Uint64

// NewMarker returns a marker for a new tool call of this process:
// "<pid>-<n>". Pass it to the call's process as MarkerVar=<marker>.
func NewMarker() string { return DaemonPrefix(os.Getpid()) + strconv.FormatUint(calls.Add(1), 10) }

// DaemonPrefix is the prefix of every marker made by the daemon pid.
func DaemonPrefix(pid int) string { return strconv.Itoa(pid) + "-" }

// Env returns the environment entry that marks a call's processes.
func Env(marker string) string { return MarkerVar + "=" + marker }

// reapWait bounds how long KillMarked waits for the processes it killed
// to be reaped.
const reapWait = 2 * time.Second

// KillMarked kills (SIGKILL) every process whose marker is marker, or
// starts with it when prefix is set, and reaps those that are, or become,
// children of this process. It returns how many processes it killed.
// It must not be called for a marker whose first process is still
// waited for by an exec.Cmd (kill that one through the Cmd first).
func KillMarked(marker string, prefix bool) int {
	self := os.Getpid()
	killed := map[int]bool{}
	// A process may fork while being killed: scan until none is left.
	for round := 0; round < 50; round++ {
		pids := Marked(marker, prefix)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if pid != self && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
		reapKilled(self, killed, 0)
	}
	reapKilled(self, killed, reapWait)
	return len(killed)
}

// reapKilled reaps the killed processes that are children of self,
// waiting up to wait for the others to be gone or re-parented to self (an
// orphan comes to self once its parent, also killed, is reaped).
func reapKilled(self int, killed map[int]bool, wait time.Duration) {
	pending := make(map[int]bool, len(killed))
	for pid := range killed {
		pending[pid] = true
	}
	deadline := time.Now().Add(wait)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		for pid := range pending {
			st, ppid, ok := procState(pid)
			switch {
			case !ok: // gone: reaped by its parent
				delete(pending, pid)
			case ppid == self:
				var ws syscall.WaitStatus
				if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || errors.Is(err, syscall.ECHILD) {
					delete(pending, pid)
				}
			case st == 'Z' && !killed[ppid]:
				delete(pending, pid) // a zombie its living parent will reap
			}
		}
		if len(pending) == 0 || !time.Now().Before(deadline) {
			return
		}
		time.Sleep(pause) // the kernel delivers SIGKILL and re-parents asynchronously
	}
}

// Marked lists the processes whose marker is marker (or starts with it,
// when prefix is set). Zombies have no environment and are not listed.
func Marked(marker string, prefix bool) []int {
	needle := []byte(MarkerVar + "=" + marker)
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		env, err := os.ReadFile(dir + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		if hasEntry(env, needle, prefix) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasEntry reports whether the NUL-separated environment block env has
// an entry equal to needle (or starting with it, when prefix is set).
func hasEntry(env, needle []byte, prefix bool) bool {
	for len(env) > 0 {
		entry := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			entry, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if bytes.Equal(entry, needle) || (prefix && bytes.HasPrefix(entry, needle)) {
			return true
		}
	}
	return false
}

// procState returns the state letter and parent of pid, from
// /proc/PID/stat; ok is false when there is no such process.
func procState(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+4 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(f[1]))
	return f[0][0], ppid, err == nil
}

// errNotLinux is returned where there is no /proc to find processes in.
var errNotLinux = fmt.Errorf("process reaping needs Linux")
