package tools

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// readNames calls fn with the name of each entry of directory dir, read
// with getdents into buf; fn must not keep name. An unreadable directory
// has no entries.
func readNames(dir string, buf []byte, fn func(name []byte)) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// name NUL-terminated.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return
			}
			name := buf[off+19 : off+reclen]
			if k := bytes.IndexByte(name, 0); k >= 0 {
				name = name[:k]
			}
			fn(name)
			off += reclen
		}
	}
}

// openResolved opens path, which the caller resolved and checked
// (symlinks resolved, inside its root), refusing to cross any symbolic
// link on the way (openat2 RESOLVE_NO_SYMLINKS): a directory a command
// swapped for a link since the check fails with ELOOP instead of leading
// the read outside. Where openat2 is missing (Linux before 5.6, some
// seccomp filters) the file is opened and the path of what was opened
// (/proc/self/fd) must be path itself.
func openResolved(path string, flags int) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err == nil || (err != unix.ENOSYS && err != unix.EPERM) {
		return fd, err
	}
	fd, err = unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil || got != filepath.Clean(path) {
		unix.Close(fd)
		return -1, unix.ELOOP
	}
	return fd, nil
}
