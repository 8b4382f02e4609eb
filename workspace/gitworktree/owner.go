package gitworktree

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processStart returns pid's start time as /proc/<pid>/stat counts it
// (clock ticks since boot), "" where there is no /proc.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start past the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	// Field 22 (starttime) is the 20th after the command name.
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// ownerAlive reports whether the process that made mf still runs: its
// pid exists and started when the manifest says (a reused pid is not
// the owner). A zombie counts as gone.
func ownerAlive(mf Manifest) bool {
	if mf.PID <= 0 {
		return false
	}
	if err := syscall.Kill(mf.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if mf.Start == "" {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(mf.PID) + "/stat")
	if err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				return false
			}
		}
	}
	return processStart(mf.PID) == mf.Start
}
