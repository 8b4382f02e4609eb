//go:build !linux

package tools

import "syscall"

// shellProcAttr puts the bash tool's shell in a process group of its own.
// Outside Linux there is no parent-death signal: the daemon's watchdog
// kills what a killed daemon leaves.
func shellProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
