//go:build !linux

package tools

import (
	"os"
	"syscall"
)

// readNames calls fn with the name of each entry of directory dir; fn must
// not keep name. An unreadable directory has no entries. Outside Linux it
// reads the names with os.File.Readdirnames (buf is unused): getdents, which
// avoids the allocation per name, is Linux's.
func readNames(dir string, buf []byte, fn func(name []byte)) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		fn([]byte(n))
	}
}

// openResolved opens path, which the caller resolved and checked, not
// following a final symbolic link (Linux also refuses one on the way:
// openat2 RESOLVE_NO_SYMLINKS).
func openResolved(path string, flags int) (int, error) {
	return syscall.Open(path, flags|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}
