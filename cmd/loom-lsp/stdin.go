package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// interruptibleInput returns stdin in a form whose Close interrupts a Read
// that is waiting for input, so the server can end at exit while the
// client keeps its end of the pipe open (as every real client does).
//
// A pipe or socket is switched to non-blocking mode and reopened through
// Go's poller, where Close wakes the blocked reader. Anything else (a
// terminal, a regular file) is returned unchanged: a file reaches its end
// by itself, and a terminal is not switched to non-blocking mode because
// the shell shares it.
func interruptibleInput(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return r
	}
	fd := f.Fd()
	if err := unix.SetNonblock(int(fd), true); err != nil {
		return r
	}
	// NewFile sees the non-blocking descriptor and registers it with the
	// poller.
	return os.NewFile(fd, f.Name())
}
