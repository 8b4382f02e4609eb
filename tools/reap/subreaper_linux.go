package reap

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER): an orphaned descendant is re-parented
// to it, not to init, so that it can be found and reaped.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}
