package tools

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrGitDir is a path inside a git directory. The tools neither read nor
// write there: .git/config may hold credentials (a token in a remote
// URL), and .git/hooks run code.
var ErrGitDir = errors.New("files inside .git are neither read nor changed by tools")

// checkGitDir refuses abs (resolved by Resolve, under root) when it lies
// in a git directory, in any spelling: a ".git" element in any letter
// case (case-insensitive file systems), a ".git" gitfile (worktrees,
// submodules), and any directory that is a git directory whatever its name
// (git init --separate-git-dir, the modules of a submodule). Symlinks and
// ".." were resolved by Resolve, so a link to .git is caught as well.
func checkGitDir(root, abs string) error {
	rel := relTo(root, abs)
	if inGitDir(rel) {
		return fmt.Errorf("%w: %s", ErrGitDir, rel)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = filepath.Clean(root)
	}
	for d := abs; within(realRoot, d); d = filepath.Dir(d) {
		if isGitDir(d) {
			return fmt.Errorf("%w: %s (in the git directory %s)", ErrGitDir, rel, relTo(root, d))
		}
		if d == realRoot || d == filepath.Dir(d) {
			break
		}
	}
	if InGitDirectory(realRoot) {
		return fmt.Errorf("%w: %s (the workspace folder is inside a git directory)", ErrGitDir, rel)
	}
	return nil
}

// InGitDirectory reports whether dir (absolute, symlinks resolved) is a
// git directory or lies inside one: a ".git" element in any letter case,
// or a directory that is a git directory whatever its name (a bare
// repository). A workspace folder there (a client's cwd of /repo/.git or
// /repo/.git/hooks) is git's configuration and hooks as a whole: the tools
// change nothing in it, and commands get it read-only.
func InGitDirectory(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if strings.EqualFold(filepath.Base(d), ".git") || isGitDir(d) {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// inGitDir reports whether rel (relative to the root) has a ".git"
// element, in any letter case.
func inGitDir(rel string) bool {
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(el, ".git") {
			return true
		}
	}
	return false
}

// isGitDir reports whether dir looks like a git directory: a HEAD file
// and objects and refs directories, as git itself checks.
func isGitDir(dir string) bool {
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// dropGitPaths removes from a listing (slash paths relative to root) the
// paths inside a git directory, as checkGitDir defines it.
func dropGitPaths(root string, paths []string) []string {
	var gitDirs []string
	for _, p := range paths {
		if dir, base := path.Split(p); base == "HEAD" && isGitDir(filepath.Join(root, filepath.FromSlash(dir))) {
			gitDirs = append(gitDirs, dir) // "" when the root itself is one
		}
	}
	return slices.DeleteFunc(paths, func(p string) bool {
		if inGitDir(p) {
			return true
		}
		for _, d := range gitDirs {
			if strings.HasPrefix(p, d) {
				return true
			}
		}
		return false
	})
}
