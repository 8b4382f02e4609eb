package main

import (
	"context"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// watchReaderGone calls gone once the reader of w, when w is a pipe, has
// gone away (`loom-lsp exec … | head -n 1`), without waiting for the next
// write to fail: a long tool run is then cancelled at once. It returns when
// ctx is done.
func watchReaderGone(ctx context.Context, w io.Writer, gone func()) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd())}}
	for ctx.Err() == nil {
		// With no events asked for, poll still reports POLLERR: the read
		// end of the pipe is closed.
		n, err := unix.Poll(fds, 200)
		if err != nil && err != unix.EINTR {
			return
		}
		if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			gone()
			return
		}
	}
}
