package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// Read roots: folders outside the workspace that the read tools
// (read_file, list_files, grep) may read, named by absolute paths, as
// the client gave them (ACP additionalDirectories). Nothing is ever
// written in them: edit_file and write_file, and commands' writes, stay
// confined to the workspace. A path in a read root is confined to it
// like a workspace path to the workspace (no escape through "..", a
// symlink or a .git directory), and the sandbox's hidden paths (keys,
// credentials, loom's own files) stay unreadable there.

// ErrReadRoot is a read root that cannot be granted.
var ErrReadRoot = errors.New("cannot be read by the agent")

// CheckReadRoots validates the read roots dirs of the workspace root:
// each must be an absolute path of an existing directory, neither the
// workspace nor inside it, and nothing the sandbox sb hides (nil: the
// default hidden paths). It returns them with their symlinks resolved,
// in order, without repeats; an error names the first refused one.
func CheckReadRoots(root string, dirs []string, sb *sandbox.Sandbox) ([]string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = filepath.Clean(root)
	}
	var out []string
	for _, d := range dirs {
		if err := checkPathText(d); err != nil {
			return nil, err
		}
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: %q is not an absolute path", ErrReadRoot, d)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(d))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrReadRoot, d, err)
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrReadRoot, d)
		}
		switch {
		case within(realRoot, real):
			continue // the workspace's own: already readable
		case sb.Hides(real):
			return nil, fmt.Errorf("%w: %s is hidden from the agent's tools and commands (a secret or loom's own directory)", ErrReadRoot, d)
		case slices.Contains(out, real):
			continue
		}
		out = append(out, real)
	}
	return out, nil
}

// resolveRead is where a read tool reads p: in the workspace (root is
// e.Root), or, for an absolute path outside it, in the read root that
// holds it. Errors are Resolve's; a hidden path in a read root is
// outside every root.
func (e *Env) resolveRead(p string) (root, abs string, err error) {
	abs, err = Resolve(e.Root, p)
	if err == nil && e.hiddenInRoot(abs) {
		return e.Root, "", fmt.Errorf("%w: %s is hidden from the agent", ErrOutsideRoot, p)
	}
	if err == nil || !errors.Is(err, ErrOutsideRoot) || !filepath.IsAbs(p) {
		return e.Root, abs, err
	}
	for _, r := range e.ReadRoots {
		a, rerr := Resolve(r, p)
		if errors.Is(rerr, ErrOutsideRoot) {
			continue
		}
		if rerr != nil {
			return r, "", rerr
		}
		if e.Sandbox.Hides(a) {
			return r, "", fmt.Errorf("%w: %s is hidden from the agent", ErrOutsideRoot, p)
		}
		return r, a, nil
	}
	if len(e.ReadRoots) > 0 {
		err = fmt.Errorf("%w (nor in the additional directories %v)", err, e.ReadRoots)
	}
	return e.Root, "", err
}

// shown is how a read tool names abs, found under root: relative to the
// workspace, absolute in a read root.
func (e *Env) shown(root, abs string) string {
	if root == e.Root {
		return relTo(root, abs)
	}
	return abs
}

// visible drops from paths (relative to root, slash-separated) those
// hidden from the agent, when root is a read root: a listing or a search
// of a read root never shows a secret directory's files.
func (e *Env) visible(root string, paths []string) []string {
	hidden := e.Sandbox.HiddenPaths()
	if root == e.Root {
		hidden = hiddenBelow(hidden, root)
		if len(hidden) == 0 {
			return paths
		}
	}
	return slices.DeleteFunc(paths, func(p string) bool {
		abs := filepath.Join(root, filepath.FromSlash(p))
		return slices.ContainsFunc(hidden, func(h string) bool { return within(h, abs) })
	})
}

// hiddenInRoot reports whether abs, in the workspace, lies in a directory
// hidden from commands (~/.ssh, loom's state directory) that the
// workspace contains: the home directory opened as the workspace gives
// the read and write tools no more than the sandbox gives commands. A
// workspace that is itself inside a hidden directory (~/.aws opened to
// edit it) is the user's choice, and stays open to the tools.
func (e *Env) hiddenInRoot(abs string) bool {
	for _, h := range hiddenBelow(e.Sandbox.HiddenPaths(), e.Root) {
		if within(h, abs) {
			return true
		}
	}
	return false
}

// hiddenBelow keeps the hidden paths strictly inside root.
func hiddenBelow(hidden []string, root string) []string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	var out []string
	for _, h := range hidden {
		if (within(root, h) && h != root) || (within(real, h) && h != real) {
			out = append(out, h)
		}
	}
	return out
}
