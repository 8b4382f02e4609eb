//go:build !linux

package tools

import "os"

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
