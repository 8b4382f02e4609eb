package worktree

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b of d atomically (RENAME_SWAP).
func exchange(d int, a, b string) error {
	err := unix.RenameatxNp(d, a, d, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoAtomic
	}
	return err
}

// renameNoReplace renames a to b in d unless b exists (EEXIST).
func renameNoReplace(d int, a, b string) error {
	err := unix.RenameatxNp(d, a, d, b, unix.RENAME_EXCL)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoAtomic
	}
	return err
}
