package secret

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// scrubEnvBlock overwrites "name=value" with NUL bytes in the environment
// block the kernel set up at exec, which /proc/PID/environ shows for the
// whole life of the process whatever setenv and unsetenv do. It writes
// through /proc/self/mem; failures leave the block as it was.
func scrubEnvBlock(name string) {
	start, end, err := envBlock()
	if err != nil || end <= start {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return
	}
	prefix := []byte(name + "=")
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		if bytes.HasPrefix(block[off:off+n], prefix) {
			_, _ = mem.WriteAt(make([]byte, n), int64(start)+int64(off))
		}
		off += n + 1
	}
}

// envBlock returns the bounds of the process's environment block: fields
// 50 and 51 (env_start, env_end) of /proc/self/stat.
func envBlock() (start, end uint64, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Field 2, the command name, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(b[i+1:])) // fields 3, 4, …
	const envStart = 50 - 3
	if len(fields) <= envStart+1 {
		return 0, 0, fmt.Errorf("/proc/self/stat: %d fields, want env_start and env_end", len(fields)+2)
	}
	if start, err = strconv.ParseUint(fields[envStart], 10, 64); err != nil {
		return 0, 0, err
	}
	end, err = strconv.ParseUint(fields[envStart+1], 10, 64)
	return start, end, err
}

// HideProcess makes the process non-dumpable (prctl PR_SET_DUMPABLE 0):
// its /proc/PID/environ, /proc/PID/mem and similar files become readable
// by root only (CAP_SYS_PTRACE), not by the other processes of the same
// user, such as the commands the bash tool runs; it also leaves no core
// dump. Root can still read them.
func HideProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
