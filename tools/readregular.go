package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is a path that is a FIFO, a device or a socket: reading
// it could block for ever (a FIFO nobody writes) or never end (/dev/zero),
// so it is never read.
var ErrNotRegular = errors.New("not a regular file (a FIFO, device or socket): not read")

// ReadRegular reads the whole file at path, as os.ReadFile does, but
// never blocks on a FIFO nor reads a device: it opens without waiting
// (O_NONBLOCK) and refuses what is not a regular file with an error
// wrapping ErrNotRegular. A directory gives EISDIR, as os.ReadFile does.
func ReadRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return readOpened(f, path)
}

// ReadResolved reads path as [ReadRegular] does, for a path the caller
// resolved and checked (tools.Resolve: symlinks resolved, inside the
// workspace or a read root): it follows no symbolic link on the way
// (openResolved), so that a directory a command swapped for a link
// between the check and the read cannot lead it outside (a file the
// sandbox hides from commands, read with the user's rights). Such a
// swap gives an error (ELOOP).
func ReadResolved(path string) ([]byte, error) {
	f, err := OpenResolved(path)
	if err != nil {
		return nil, err
	}
	return readOpened(f, path)
}

// OpenResolved opens path for reading as [ReadResolved] does (no
// symbolic link followed on the way, without waiting on a FIFO), for a
// caller that reads it itself; it checks nothing of the file's type.
func OpenResolved(path string) (*os.File, error) {
	fd, err := openResolved(path, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func readOpened(f *os.File, path string) ([]byte, error) {
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return io.ReadAll(f)
}
