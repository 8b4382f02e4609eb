//go:build !linux

package config

import (
	"fmt"
	"os"
	"syscall"
)

// folderIdentity names the directory now at folder: its device and inode
// ("dev:ino"); see the Linux version. "" when they cannot be read.
func folderIdentity(folder string) string {
	fi, err := os.Lstat(folder)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
