package tools

import "syscall"

// shellProcAttr puts the bash tool's shell in a process group of its own
// and, with Pdeathsig, makes it die with the daemon, even of SIGKILL (the
// daemon's watchdog then kills the rest).
func shellProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
