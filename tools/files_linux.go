package tools

import (
	"bytes"
	"encoding/binary"

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
