package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Protected configuration.
//
// The files that configure loom, or the editor that starts it and pushes
// settings to it, are the user's to change, never the agent's: an agent
// that could write them could widen its own permissions (allow commands,
// start an MCP server, send requests to a server of its choice). The tools
// refuse them as they refuse .git, in every folder of the workspace (a
// nested folder may be opened as a workspace of its own, Zed reads nested
// .zed/settings.json, Emacs reads .dir-locals.el from every parent), and
// the user's own configuration directory wherever the workspace is.

// ErrProtected is wrapped by [CheckProtected]: the path is loom's
// configuration, which only the user changes.
var ErrProtected = errors.New("is loom's configuration: ask the user to change it")

// ProtectedNames are the protected names, as slash paths matched against
// the end of a path in any folder, letter case ignored (case-insensitive
// file systems): loom's workspace files, the editors' workspace settings
// that carry loom's settings, Emacs's directory-local variables (eglot
// reads eglot-workspace-configuration from them), and the agents'
// settings and hooks that run commands (Claude Code's settings, Codex's
// directory, GitHub Copilot's hooks). A name ending in "/" is a
// directory: everything in it is protected. This is the one list: the
// tools and loom's writer refuse these names, and the sandbox keeps them
// (and their directories: see package sandbox) from commands.
var ProtectedNames = []string{
	".loom.toml",
	"loom.toml",
	".vscode/settings.json",
	".zed/settings.json",
	".dir-locals.el",
	".dir-locals-2.el",
	".claude/settings.json",
	".claude/settings.local.json",
	".mcp.json",
	".vscode/mcp.json",
	".cursor/mcp.json",
	".codex/",
	".gemini/",
	".github/hooks/",
	".loom/hooks.json",
}

// UserConfigDir is the directory of the user's own configuration: the
// user file and the trust file ($XDG_CONFIG_HOME/loom, else
// ~/.config/loom). "" when neither can be determined.
func UserConfigDir() string {
	if f := DefaultUserFile(); f != "" {
		return filepath.Dir(f)
	}
	return ""
}

// protectedState holds loom's state directories (ProtectStateDir).
var protectedState struct {
	sync.Mutex
	dirs []string
}

// ProtectStateDir makes dir (absolute), loom's state directory, and
// everything inside it protected for the rest of the process, as the
// user's configuration directory is: it holds the journals and the
// user's approval rules ("always allow every command"), which a folder
// that contains it (the home directory opened as a workspace) must not
// let the agent write.
func ProtectStateDir(dir string) {
	if dir == "" || !filepath.IsAbs(dir) {
		return
	}
	protectedState.Lock()
	defer protectedState.Unlock()
	if !slices.Contains(protectedState.dirs, dir) {
		protectedState.dirs = append(protectedState.dirs, dir)
	}
}

// WorktreesDir is the directory of loom's state directory that holds
// the git worktrees conversations work in (package gitworktree): each
// checkout is a directory whose name has no dot, beside its manifest
// (<name>.json).
const WorktreesDir = "worktrees"

// inWorktreeCheckout reports whether path, inside the state directory
// state, lies in one of the worktrees' checkouts: the user's code, which
// a worktree conversation writes, not loom's state. The manifests beside
// them stay protected.
func inWorktreeCheckout(state, path string) bool {
	rel, err := filepath.Rel(state, path)
	if err != nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return len(parts) >= 2 && parts[0] == WorktreesDir && parts[1] != "" && !strings.Contains(parts[1], ".")
}

func stateDirs() []string {
	protectedState.Lock()
	defer protectedState.Unlock()
	return slices.Clone(protectedState.dirs)
}

// ErrHomeConfig is wrapped by [CheckProtected] for the user's own
// configuration in the home directory ([InHomeConfig]); it matches
// [ErrProtected] too.
var ErrHomeConfig error = homeConfigError{}

type homeConfigError struct{}

func (homeConfigError) Error() string {
	return "is your own configuration in your home directory (what your shells, git, ssh or desktop run outside any sandbox): ask the user to change it"
}

func (homeConfigError) Is(target error) bool { return target == ErrProtected }

// HomeCaches are the entries of the home directory that stay writable
// when a workspace holds the home directory: the tools' caches (the
// sandbox's DefaultWritable under the home directory).
var HomeCaches = []string{".cache", ".npm", ".yarn", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches"}

// InHomeConfig reports whether path (absolute, clean) is the user's own
// configuration in the home directory, in a workspace root that holds the
// home directory (root is it or one of its parents): an entry of the home
// directory whose name starts with a dot, or anything inside one, but the
// tools' caches ([HomeCaches]). Those are what the user's shells, git,
// ssh, editors, systemd and desktop run or obey outside any sandbox
// (~/.bashrc, ~/.profile, ~/.gitconfig, ~/.ssh/authorized_keys,
// ~/.config/autostart, ~/.config/systemd/user). A workspace inside one of
// them (~/.dotfiles or ~/.config/nvim opened to edit it) is the user's
// choice and stays open; outside the workspace the tools cannot reach
// them anyway.
func InHomeConfig(root, path string) bool {
	for _, h := range homeDirs() {
		if !inOrAt(h, root) {
			continue
		}
		rel, err := filepath.Rel(h, path)
		if err != nil || rel == "." || !strings.HasPrefix(rel, ".") || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		slash := filepath.ToSlash(rel)
		if !slices.ContainsFunc(HomeCaches, func(c string) bool { return slash == c || strings.HasPrefix(slash, c+"/") }) {
			return true
		}
	}
	return false
}

// inOrAt reports whether the clean path p is dir or lies inside it.
func inOrAt(p, dir string) bool {
	dir = filepath.Clean(dir)
	return p == dir || dir == string(filepath.Separator) || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// homeCache keeps the home directory's resolved path for its value of
// $HOME: IsProtectedIn runs for every path a command changed.
var homeCache struct {
	sync.Mutex
	home, resolved string
}

// homeDirs returns the home directory as given and with its symlinks
// resolved; none when it is unknown.
func homeDirs() []string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	homeCache.Lock()
	defer homeCache.Unlock()
	if homeCache.home != home {
		homeCache.home, homeCache.resolved = home, resolvePath(home)
	}
	return []string{home, homeCache.resolved}
}

// IsProtectedIn reports whether path (absolute) is protected in the
// workspace root: [IsProtected], or the user's own configuration in a
// home directory root holds ([InHomeConfig]).
func IsProtectedIn(root, path string) bool {
	path = filepath.Clean(path)
	return IsProtected(path) || InHomeConfig(filepath.Clean(root), path)
}

// IsProtected reports whether path (absolute) is loom's configuration: a
// file whose path ends with one of [ProtectedNames], or the user's
// configuration directory or loom's state directory (ProtectStateDir),
// or anything inside them. Symlinks of path are
// not resolved here: callers pass a resolved path, so that a link to a
// protected file is caught under the link's target name.
func IsProtected(path string) bool {
	path = filepath.Clean(path)
	for _, name := range ProtectedNames {
		if dir, ok := strings.CutSuffix(name, "/"); ok {
			if inDir(path, dir) {
				return true
			}
		} else if endsWith(path, name) {
			return true
		}
	}
	for _, dir := range append([]string{UserConfigDir()}, stateDirs()...) {
		if dir == "" {
			continue
		}
		for _, d := range []string{filepath.Clean(dir), resolvePath(dir)} {
			if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) && !inWorktreeCheckout(d, path) {
				return true
			}
		}
	}
	return false
}

// CheckProtected returns an error wrapping [ErrProtected] when
// IsProtected(path), naming path relative to root when it lies inside.
func CheckProtected(root, path string) error {
	if !IsProtectedIn(root, path) {
		return nil
	}
	name := path
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		name = filepath.ToSlash(rel)
	}
	if InHomeConfig(filepath.Clean(root), filepath.Clean(path)) {
		return fmt.Errorf("%s %w", name, ErrHomeConfig)
	}
	return fmt.Errorf("%s %w", name, ErrProtected)
}

// ProtectedPaths returns the absolute paths of the protected files at the
// top of folder (existing or not) and the user's configuration directory,
// for a sandbox that keeps commands from writing them. Nested folders'
// files are protected too: test a path with [IsProtected].
func ProtectedPaths(folder string) []string {
	var out []string
	for _, name := range ProtectedNames {
		out = append(out, filepath.Join(folder, filepath.FromSlash(strings.TrimSuffix(name, "/"))))
	}
	if dir := UserConfigDir(); dir != "" {
		out = append(out, dir)
	}
	return out
}

// inDir reports whether the clean path is the slash path dir, or inside
// it, at any depth of the path, letter case ignored.
func inDir(path, dir string) bool {
	have := strings.Split(filepath.ToSlash(path), "/")
	for end := len(have); end > 0; end-- {
		if endsWith(strings.Join(have[:end], "/"), dir) {
			return true
		}
	}
	return false
}

// endsWith reports whether the clean path's last elements are those of
// the slash path name, letter case ignored.
func endsWith(path, name string) bool {
	want := strings.Split(name, "/")
	have := strings.Split(filepath.ToSlash(path), "/")
	if len(have) < len(want) {
		return false
	}
	have = have[len(have)-len(want):]
	for i := range want {
		if !strings.EqualFold(have[i], want[i]) {
			return false
		}
	}
	return true
}
