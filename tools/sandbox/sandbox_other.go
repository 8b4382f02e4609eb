//go:build !linux

package sandbox

import "os/exec"

// probe: Landlock is Linux's; elsewhere there is no sandbox.
func probe() system {
	return system{why: "Landlock is Linux-only, and loom has no sandbox for this system yet"}
}

// Wrap does nothing outside Linux: there is no sandbox (Active is false).
func (s *Sandbox) Wrap(cmd *exec.Cmd) error { return nil }
