package mcp

import "golang.org/x/sys/unix"

// waitExit blocks until process pid has exited, without reaping it (the
// transport's Wait does).
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
