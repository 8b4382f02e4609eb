package workspace

import (
	"time"

	"golang.org/x/sys/unix"
)

// bornSlack is how far a file's birth time may lag the clock it is
// compared with (the kernel stamps files with a coarse clock: a tick).
const bornSlack = 20 * time.Millisecond

// bornSince reports whether the file at p (not followed) was created at
// or after since; false when the file system does not say.
func bornSince(p string, since time.Time) bool {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &stx); err != nil || stx.Mask&unix.STATX_BTIME == 0 {
		return false
	}
	return !time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec)).Before(since.Add(-bornSlack))
}
