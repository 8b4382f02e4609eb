package tools

import (
	"os"
	"syscall"
)

// CommandEnviron is the environment of a process loom starts for the
// agent besides bash (a language server): the daemon's, without API keys
// and the variables named in extra, as bash gets it.
func CommandEnviron(extra []string) []string { return scrubEnv(os.Environ(), extra) }

// CommandProcAttr puts such a process in a process group of its own that
// dies with the daemon, as bash's shell does.
func CommandProcAttr() *syscall.SysProcAttr { return shellProcAttr() }
