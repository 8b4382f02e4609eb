package gitworktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// IncludeFile names the untracked files a new worktree gets copies of,
// in .gitignore syntax, at the top of the repository.
const IncludeFile = ".worktreeinclude"

// copyIncluded copies the untracked files of repo that .worktreeinclude
// matches into dst (the new worktree): regular files only, opened
// beneath repo and dst without following a symbolic link (os.Root), with
// their permission bits. It returns their paths, slash-separated.
func copyIncluded(ctx context.Context, repo, dst string) ([]string, error) {
	if _, err := os.Lstat(filepath.Join(repo, IncludeFile)); err != nil {
		return nil, nil
	}
	// The untracked files the include file's patterns match: git reads
	// them as exclude patterns, and -i lists what they exclude.
	out, err := git(ctx, repo, "ls-files", "-z", "--others", "-i", "--exclude-from="+IncludeFile)
	if err != nil {
		return nil, err
	}
	src, err := os.OpenRoot(repo)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return nil, err
	}
	defer to.Close()
	var copied []string
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" || !filepath.IsLocal(rel) || hasGitElement(rel) {
			continue
		}
		ok, err := copyOne(src, to, rel)
		if err != nil {
			return copied, fmt.Errorf("%s: %w", rel, err)
		}
		if ok {
			copied = append(copied, filepath.ToSlash(rel))
		}
	}
	return copied, nil
}

// hasGitElement reports whether rel goes through a .git.
func hasGitElement(rel string) bool {
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(el, ".git") {
			return true
		}
	}
	return false
}

// copyOne copies rel from src to dst when it is a regular file reached
// without a symbolic link; false when it is not one.
func copyOne(src, dst *os.Root, rel string) (bool, error) {
	st, err := src.Lstat(rel)
	if err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	if err := noLinkOnPath(src, rel); err != nil {
		return false, nil
	}
	in, err := src.Open(rel)
	if err != nil {
		return false, err
	}
	defer in.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := dst.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
	}
	out, err := dst.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil // tracked in the checkout after all: git's copy wins
		}
		return false, err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Close()
	} else {
		out.Close()
	}
	return err == nil, err
}

// noLinkOnPath refuses rel when one of its directories is a symbolic
// link (os.Root follows links that stay beneath it).
func noLinkOnPath(r *os.Root, rel string) error {
	dir := filepath.Dir(rel)
	for dir != "." && dir != "/" {
		st, err := r.Lstat(dir)
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link", dir)
		}
		dir = filepath.Dir(dir)
	}
	return nil
}
