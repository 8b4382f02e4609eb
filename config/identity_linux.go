package config

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// folderIdentity names the directory now at folder (resolved): its
// device, inode and birth time ("dev:ino:btime", the birth time in
// nanoseconds when the file system keeps one). A folder deleted and
// re-created at the same path, or a fresh clone there, is a new directory
// with another identity even when the file system reuses the inode
// number. "" when folder cannot be read.
func folderIdentity(folder string) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, folder, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return ""
	}
	dev := unix.Mkdev(st.Dev_major, st.Dev_minor)
	if st.Mask&unix.STATX_BTIME == 0 {
		return fmt.Sprintf("%d:%d", dev, st.Ino)
	}
	return fmt.Sprintf("%d:%d:%d", dev, st.Ino, st.Btime.Sec*1_000_000_000+int64(st.Btime.Nsec))
}
