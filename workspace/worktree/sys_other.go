//go:build !linux

package worktree

// openDir opens dir (slash-separated, relative to root) one component at
// a time without following a link.
func openDir(root int, dir string, create bool) (int, error) {
	return walkDir(root, dir, create)
}

// syncFS is not available here: each file is synced.
func syncFS(int) error { return errNoAtomic }
