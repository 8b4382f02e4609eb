// Command maxrss runs a command (its arguments after the first) and
// writes the command's peak resident set size, in kB, to the file named
// by its first argument; it exits with the command's status. The memory
// tests start loom-lsp through it because Linux counts in a process's
// ru_maxrss the memory of the process it was exec'd from, and a Go test
// binary starts its children with vfork: read directly, a child's peak
// would be the test binary's. Started from this small program, it is the
// command's own.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: maxrss OUTFILE COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(2)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru != nil {
		os.WriteFile(os.Args[1], []byte(fmt.Sprint(ru.Maxrss)), 0o644)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
