package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
)

// Errors of Resolve. Each is wrapped with the offending path.
var (
	// ErrOutsideRoot is a path that lands outside the workspace root,
	// lexically or through a symlink.
	ErrOutsideRoot = errors.New("path is outside the workspace root")
	// ErrBadPath is a path refused on its face: empty, NUL bytes, control
	// characters, "~", too long, or look-alikes of "/" and ".".
	ErrBadPath = errors.New("invalid path")
)

// Limits on the paths Resolve accepts (Linux PATH_MAX and NAME_MAX).
const (
	maxPathBytes = 4096
	maxNameBytes = 255
)

// lookAlikes are characters a model may use, or be tricked into using,
// where it means "/" or "."; they would be literal file name characters,
// so Resolve refuses them instead of silently creating odd names.
var lookAlikes = []rune{
	'\u2215', // DIVISION SLASH
	'\u2044', // FRACTION SLASH
	'\u29F8', // BIG SOLIDUS
	'\uFF0F', // FULLWIDTH SOLIDUS
	'\uFF3C', // FULLWIDTH REVERSE SOLIDUS
	'\u2024', // ONE DOT LEADER
	'\u2025', // TWO DOT LEADER
	'\uFE52', // SMALL FULL STOP
	'\uFF0E', // FULLWIDTH FULL STOP
	'\u3002', // IDEOGRAPHIC FULL STOP
}

// Resolve confines p to the workspace root and returns the absolute path
// to use, with every existing symlink resolved. p may be relative to root
// or absolute (then it must lie under root, resolved or not). For a path
// that does not exist yet, its longest existing prefix is resolved and
// the rest is appended, so a missing file under a symlinked directory
// pointing out is refused too. A dangling symlink is refused, since
// following it could create a file outside the root. Refused paths give
// an error wrapping ErrOutsideRoot or ErrBadPath.
func Resolve(root, p string) (string, error) {
	if err := checkPathText(p); err != nil {
		return "", err
	}
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("workspace root %q is not absolute", root)
	}
	root = filepath.Clean(root)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	var clean string
	if filepath.IsAbs(p) {
		clean = filepath.Clean(p)
		switch {
		case within(realRoot, clean):
		case within(root, clean):
			clean = filepath.Join(realRoot, strings.TrimPrefix(clean, root))
		default:
			return "", fmt.Errorf("%w: %s", ErrOutsideRoot, p)
		}
	} else {
		clean = filepath.Join(realRoot, p)
		if !within(realRoot, clean) {
			return "", fmt.Errorf("%w: %s", ErrOutsideRoot, p)
		}
	}
	resolved, err := resolveExisting(clean)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrBadPath, p, err)
	}
	if !within(realRoot, resolved) {
		return "", fmt.Errorf("%w: %s (resolves to %s)", ErrOutsideRoot, p, resolved)
	}
	return resolved, nil
}

// checkPathText refuses paths on their face.
func checkPathText(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", ErrBadPath)
	case len(p) > maxPathBytes:
		return fmt.Errorf("%w: path longer than %d bytes", ErrBadPath, maxPathBytes)
	case strings.HasPrefix(p, "~"):
		return fmt.Errorf("%w: %q: \"~\" is not expanded; use a path relative to the workspace root", ErrBadPath, p)
	}
	for _, r := range p {
		switch {
		case r == 0:
			return fmt.Errorf("%w: path contains a NUL byte", ErrBadPath)
		case r == '\uFFFD':
			return fmt.Errorf("%w: %q is not valid UTF-8", ErrBadPath, p)
		case unicode.IsControl(r):
			return fmt.Errorf("%w: %q contains a control character", ErrBadPath, p)
		}
		for _, l := range lookAlikes {
			if r == l {
				return fmt.Errorf("%w: %q contains %U, a look-alike of \"/\" or \".\"", ErrBadPath, p, r)
			}
		}
	}
	for _, name := range strings.Split(p, string(filepath.Separator)) {
		if len(name) > maxNameBytes {
			return fmt.Errorf("%w: a path element is longer than %d bytes", ErrBadPath, maxNameBytes)
		}
	}
	return nil
}

// resolveExisting resolves the symlinks of the longest existing prefix
// of the clean absolute path p and appends the missing rest.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		_, err := os.Lstat(cur)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("dangling symlink %s", cur)
		}
		return "", err
	}
	for i := len(rest) - 1; i >= 0; i-- {
		real = filepath.Join(real, rest[i])
	}
	return real, nil
}

// within reports whether p is root or lies under it; both are clean.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if root == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// relTo returns p relative to root in slash form, for display.
func relTo(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// isDirErr reports whether err says the path is a directory.
func isDirErr(err error) bool { return errors.Is(err, syscall.EISDIR) }
