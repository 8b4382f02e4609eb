package worktree

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// openDir opens dir (slash-separated, relative to root) beneath root with
// openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, falling back to the
// component walk where openat2 is unavailable, and to create missing
// directories.
func openDir(root int, dir string, create bool) (int, error) {
	if dir == "" {
		return unix.Dup(root)
	}
	fd, err := unix.Openat2(root, dir, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.ENOENT) && !create:
		return -1, fmt.Errorf("%s: %w", dir, fs.ErrNotExist)
	case errors.Is(err, unix.EXDEV):
		return -1, fmt.Errorf("%s %w", dir, ErrOutside)
	}
	// ELOOP and ENOTDIR are explained, ENOENT created, and ENOSYS, EPERM
	// (a seccomp filter) or E2BIG handled by the walk.
	return walkDir(root, dir, create)
}

// exchange swaps the names a and b of d atomically.
func exchange(d int, a, b string) error {
	err := unix.Renameat2(d, a, d, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return errNoAtomic
	}
	return err
}

// renameNoReplace renames a to b in d unless b exists (EEXIST).
func renameNoReplace(d int, a, b string) error {
	err := unix.Renameat2(d, a, d, b, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return errNoAtomic
	}
	return err
}

// syncFS makes everything written to fd's file system durable.
func syncFS(fd int) error { return unix.Syncfs(fd) }
