// Package sandbox runs the agent's commands (bash, stdio MCP servers)
// under Landlock, the Linux kernel's unprivileged sandbox.
//
// Landlock restricts the process that asks for it and everything it
// starts, so a command is started through loom-lsp itself: [Sandbox.Wrap]
// rewrites an exec.Cmd to run this program's hidden entry point
// ([HelperArg]), which this package's init function runs before main (and
// before any test's TestMain): it sets the sandbox up and then execs the
// real command in place, so the process group, the exit status, signals
// and the reaping markers are the command's own.
//
// What a sandboxed command may do:
//
//   - write only inside the workspace folder, the temp directory, the
//     tools' cache directories ([DefaultWritable]) and what the user adds;
//     never into the folder's .git nor loom's configuration files, which
//     stay readable;
//   - read everything but the secret directories ([DefaultHidden]) and
//     what the user adds;
//   - reach the network as configured: on, off, or connect only to the
//     listed TCP ports.
//
// Landlock grants access by file hierarchy and cannot carve a read-only
// hole into a writable tree, so .git and the configuration files are made
// read-only by a bind mount in a private user and mount namespace; where
// user namespaces are not available, the folder's top-level entries are
// granted one by one instead (then a command cannot create a new file at
// the top of the folder). Hidden directories are left out of the grants
// the same way: their parent directories' other entries are granted one
// by one.
package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// Network modes of a [Policy].
const (
	NetworkOn    = "on"
	NetworkOff   = "off"
	NetworkAllow = "allow"
)

// Policy is what a sandboxed command may do.
type Policy struct {
	// Root is the workspace folder: absolute, symlinks resolved.
	Root string
	// Write adds writable directories (absolute, or starting with ~/) to
	// the defaults.
	Write []string
	// Hide adds unreadable directories to the defaults.
	Hide []string
	// Unhide takes paths out of the hidden ones (tools.sandbox_unhide):
	// a hidden path equal to one of them or inside it is readable again,
	// and one inside a hidden directory is readable on its own.
	Unhide []string
	// StateDir is loom's state directory (every conversation's journal):
	// hidden, as the default one is.
	StateDir string
	// Sockets lists the unix sockets commands may still reach
	// (tools.sandbox_sockets; see sockets.go): absolute, ~/…,
	// $SSH_AUTH_SOCK or $XDG_RUNTIME_DIR/….
	Sockets []string
	// ReadOnly names paths relative to Root that stay read-only (loom's
	// configuration files); .git always does.
	ReadOnly []string
	// ReadOnlyRoot makes the whole workspace folder read-only: commands
	// may read it and write only the temp and cache directories and
	// Write (the read-only commands of plan and ask modes,
	// tools.plan_commands), also where the folder lies inside one of
	// those.
	ReadOnlyRoot bool
	// ReadOnlyTrees are absolute directories outside Root that stay
	// read-only, also where they lie inside a writable directory (a temp
	// directory): the user's own tree, for a conversation that works in a
	// git worktree of it, whose commands must write only the worktree.
	ReadOnlyTrees []string
	// Network is NetworkOn, NetworkOff or NetworkAllow; "" means on.
	Network string
	// Allow lists "host:port" for NetworkAllow. Landlock filters TCP by
	// port only: the host is not checked.
	Allow []string
}

// DefaultReadOnly are the protected names (config.ProtectedNames, the
// list the tools share), relative to the workspace folder, which commands
// may read but not write, nor rename or recreate (.git too, at any
// depth: see protect).
var DefaultReadOnly = config.ProtectedNames

// DefaultHidden are the directories and files, relative to the home
// directory, that a sandboxed command cannot read: keys and credentials
// (ssh, gpg, the clouds', git's, GitHub's CLI, npm's, PyPI's, cargo's,
// docker's, Kubernetes', netrc, Vault's token, pass), loom's own
// configuration and its state (every conversation's journal). The same
// under $XDG_CONFIG_HOME and $XDG_STATE_HOME is hidden too.
var DefaultHidden = []string{".ssh", ".aws", ".gnupg", ".config/loom", ".local/state/loom", ".netrc", ".docker/config.json", ".kube",
	".config/gcloud", ".azure", ".password-store", ".git-credentials", ".config/git/credentials", ".config/gh/hosts.yml",
	".npmrc", ".pypirc", ".cargo/credentials.toml", ".cargo/credentials", ".vault-token"}

// xdgHidden are the hidden paths relative to $XDG_CONFIG_HOME and
// $XDG_STATE_HOME, when those are set.
var xdgHidden = map[string][]string{
	"XDG_CONFIG_HOME": {"loom", "git/credentials", "gh/hosts.yml", "gcloud"},
	"XDG_STATE_HOME":  {"loom"},
}

// DefaultWritable returns the tools' cache directories a sandboxed
// command may write besides the workspace and the temp dir: ~/.cache
// (and $XDG_CACHE_HOME), the Go build and module caches ($GOCACHE,
// $GOMODCACHE, else ~/go/pkg/mod), npm's, yarn's, cargo's registry,
// Maven's and Gradle's caches.
func DefaultWritable(home string) []string {
	var dirs []string
	for _, v := range []string{"XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE"} {
		if d := os.Getenv(v); filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	if gopath := os.Getenv("GOPATH"); os.Getenv("GOMODCACHE") == "" && gopath != "" {
		for _, p := range filepath.SplitList(gopath) {
			if filepath.IsAbs(p) {
				dirs = append(dirs, filepath.Join(p, "pkg", "mod"))
			}
		}
	}
	if home != "" {
		for _, d := range []string{".cache", "go/pkg/mod", ".npm", ".yarn", ".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches"} {
			dirs = append(dirs, filepath.Join(home, d))
		}
	}
	return dirs
}

// Sandbox runs commands under one Policy. It is safe for concurrent use.
type Sandbox struct {
	p   Policy
	sys system
	// told is set once a command's result said that there is no sandbox.
	told atomic.Bool
	// socketsShown turns the hiding of unix sockets off, only for the
	// benchmark that measures its cost.
	socketsShown bool
}

// system is what this machine offers: its Landlock ABI (0: none) and
// whether user namespaces work; why says what is missing.
type system struct {
	abi    int
	userns bool
	why    string
}

// New returns a sandbox for p on this machine.
func New(p Policy) *Sandbox {
	if p.Network == "" {
		p.Network = NetworkOn
	}
	return &Sandbox{p: p, sys: probe()}
}

// ReadOnly returns a sandbox with s's policy but the whole workspace
// read-only (Policy.ReadOnlyRoot): for the commands of the read-only
// modes. It is nil for nil (no sandbox).
func (s *Sandbox) ReadOnly() *Sandbox {
	if s == nil {
		return nil
	}
	p := s.p
	p.ReadOnlyRoot = true
	return &Sandbox{p: p, sys: s.sys, socketsShown: s.socketsShown}
}

// Offline returns a sandbox with s's policy but no network
// (Policy.Network = NetworkOff): for what runs code the agent may have
// shaped without the user's approval of that run (a repository's agent
// hooks under tools.bash = "ask"). It is nil for nil (no sandbox).
func (s *Sandbox) Offline() *Sandbox {
	if s == nil {
		return nil
	}
	p := s.p
	p.Network, p.Allow = NetworkOff, nil
	return &Sandbox{p: p, sys: s.sys, socketsShown: s.socketsShown}
}

// Hides reports whether p (absolute, symlinks resolved) is hidden from
// commands: a secret directory, loom's state, tools.sandbox_hide. A nil
// sandbox (tools.sandbox = "off") still names the default hidden paths,
// for the read tools' additional directories.
func (s *Sandbox) Hides(p string) bool {
	return slices.ContainsFunc(s.HiddenPaths(), func(h string) bool { return within(p, h) })
}

// HiddenPaths are the paths Hides hides (absolute, symlinks resolved):
// p is hidden when it is one of them or lies inside one.
func (s *Sandbox) HiddenPaths() []string {
	if s == nil {
		s = &Sandbox{}
	}
	home, _ := os.UserHomeDir()
	return s.hidden(home)
}

// Active reports whether commands really run sandboxed here.
func (s *Sandbox) Active() bool { return s != nil && s.sys.abi > 0 }

// Policy returns the sandbox's policy.
func (s *Sandbox) Policy() Policy { return s.p }

// Unavailable says why there is no sandbox on this machine; "" when
// there is one.
func (s *Sandbox) Unavailable() string {
	switch {
	case s == nil:
		return `the sandbox is off (tools.sandbox = "off"): commands run with your full permissions`
	case s.Active():
		return ""
	}
	return "no sandbox: " + s.sys.why + "; commands run with your full permissions"
}

// FirstNotice returns, once per Sandbox, the note for the first command's
// result when there is no sandbox here; "" otherwise.
func (s *Sandbox) FirstNotice() string {
	if s == nil || s.Active() || !s.told.CompareAndSwap(false, true) {
		return ""
	}
	return "(" + s.Unavailable() + ")\n"
}

// Describe is the one line loom.status shows: "landlock ABI 7, writes:
// …, hidden: …, network: on".
func (s *Sandbox) Describe() string {
	if !s.Active() {
		return s.Unavailable()
	}
	home, _ := os.UserHomeDir()
	short := func(p string) string {
		if home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
			return "~" + p[len(home):]
		}
		return p
	}
	return fmt.Sprintf("landlock ABI %d, writes: %s; %s; hidden: %s; %s; network: %s",
		s.sys.abi, strings.Join(s.describeWrites(home, short), ", "), s.describeReadOnly(),
		strings.Join(s.describeHidden(home, short), ", "), s.describeSockets(short), s.describeNetwork())
}

// describeWrites are the writable places, as Describe shows them: the
// workspace (unless read-only), the existing writable directories, shared
// memory and the terminals.
func (s *Sandbox) describeWrites(home string, short func(string) string) []string {
	writes := []string{"workspace"}
	if s.p.ReadOnlyRoot {
		writes = nil
	}
	for _, d := range s.writable(home) {
		if _, err := os.Stat(d); err == nil && !slices.Contains(writes, short(d)) {
			writes = append(writes, short(d))
		}
	}
	// Shared memory and the terminals are writable too (fsRules): POSIX
	// shared memory and semaphores live in /dev/shm.
	return append(writes, "/dev/shm", "/dev/pts")
}

// describeReadOnly says what stays read-only inside the workspace.
func (s *Sandbox) describeReadOnly() string {
	if s.p.ReadOnlyRoot {
		return "the workspace read-only"
	}
	ro := ".git and loom's config read-only"
	if !s.sys.userns {
		ro += " (no user namespaces: new files at the folder's top level are blocked)"
	}
	if len(s.p.ReadOnlyTrees) > 0 {
		ro += "; read-only: " + strings.Join(s.p.ReadOnlyTrees, ", ")
	}
	return ro
}

// describeHidden are the hidden directories, then those the user chose
// not to hide.
func (s *Sandbox) describeHidden(home string, short func(string) string) []string {
	var hidden []string
	for _, d := range s.hidden(home) {
		hidden = append(hidden, short(d))
	}
	if un := s.unhidden(home); len(un) > 0 {
		var shown []string
		for _, d := range un {
			shown = append(shown, short(d))
		}
		hidden = append(hidden, "not hidden (tools.sandbox_unhide): "+strings.Join(shown, ", "))
	}
	return hidden
}

// describeNetwork is the network policy as it holds here.
func (s *Sandbox) describeNetwork() string {
	switch {
	case s.p.Network == NetworkAllow:
		return "only " + strings.Join(s.p.Allow, ", ") + " (TCP, by port)"
	case s.p.Network == NetworkOff && !s.netnsOff() && s.sys.abi < 4:
		return "on (cannot be turned off here: " + s.sys.why + ")"
	}
	return s.p.Network
}

// netnsOff reports whether network "off" uses a network namespace.
func (s *Sandbox) netnsOff() bool { return s.p.Network == NetworkOff && s.sys.userns }

// writable is every writable directory but the workspace, absolute.
func (s *Sandbox) writable(home string) []string {
	dirs := []string{os.TempDir()}
	dirs = append(dirs, DefaultWritable(home)...)
	for _, d := range s.p.Write {
		dirs = append(dirs, expandHome(d, home))
	}
	return cleanAll(dirs)
}

// hidden is every unreadable path, absolute.
func (s *Sandbox) hidden(home string) []string {
	var dirs []string
	if home != "" {
		for _, d := range DefaultHidden {
			dirs = append(dirs, filepath.Join(home, d))
		}
	}
	for v, names := range xdgHidden {
		if base := os.Getenv(v); filepath.IsAbs(base) {
			for _, n := range names {
				dirs = append(dirs, filepath.Join(base, n))
			}
		}
	}
	if s.p.StateDir != "" {
		dirs = append(dirs, s.p.StateDir)
	}
	for _, d := range s.p.Hide {
		dirs = append(dirs, expandHome(d, home))
	}
	unhide := s.unhidden(home)
	return slices.DeleteFunc(cleanAll(dirs), func(d string) bool {
		return slices.ContainsFunc(unhide, func(u string) bool { return within(d, u) })
	})
}

// unhidden is tools.sandbox_unhide, absolute.
func (s *Sandbox) unhidden(home string) []string {
	var out []string
	for _, d := range s.p.Unhide {
		out = append(out, expandHome(d, home))
	}
	return cleanAll(out)
}

// protect resolves the protected names into what keeps them from
// commands: ro, the paths bind-mounted read-only, and pins, directories
// bind-mounted onto themselves (writable, but a mount point cannot be
// renamed or removed, so that the directory above a protected name
// cannot be swapped for another). For each name (.git, the nested
// repositories' and submodules' .git, the protected names):
//
//   - where it exists, it is read-only;
//   - where it does not, its nearest existing directory below the root is
//     read-only (no .vscode/settings.json in .vscode: .vscode is), so that
//     it cannot be created;
//   - the directories between the root and that path are pinned.
//
// A name none of whose directories exists below the root (no .vscode at
// all) cannot be kept from being created without making the whole
// folder's top level read-only: loom's own files are then held back by
// trust on first sight (config.Trust), and the others are left to their
// readers' own trust (VS Code's workspace trust, Emacs's risky local
// variables).
func (s *Sandbox) protect() (ro, pins []string) {
	root := s.p.Root
	names := s.p.ReadOnly
	if names == nil {
		names = DefaultReadOnly
	}
	rels := append([]string{".git"}, names...)
	nested := nestedGitDirs(root)
	for _, n := range nested {
		if dir, ok := strings.CutSuffix(n, "/.git"); ok && !lexists(filepath.Join(root, filepath.FromSlash(dir))) {
			// A submodule whose directory is missing (removed by the
			// user): no directory to keep read-only, so a command could
			// make a repository there, whose configuration git status
			// (the user's own) would run. Made again, empty, as git
			// checkout makes it, so that it is kept like any other.
			_ = mkdirBeneath(root, dir)
		}
	}
	rels = append(rels, nested...)
	rels = append(rels, IncludedConfigs(root)...)
	rels = append(rels, s.homeConfig(root)...)
	for _, n := range rels {
		p := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(n, "/")))
		target := p
		for target != root && within(target, root) && !lexists(target) {
			target = filepath.Dir(target)
		}
		if target == root || !within(target, root) {
			continue
		}
		ro = append(ro, target)
		for d := filepath.Dir(target); d != root && within(d, root); d = filepath.Dir(d) {
			pins = append(pins, d)
		}
	}
	ro = cleanAll(ro)
	pins = slices.DeleteFunc(cleanAll(pins), func(p string) bool {
		return slices.ContainsFunc(ro, func(r string) bool { return within(p, r) })
	})
	return ro, pins
}

// homeConfig returns, when root holds the home directory, the home
// directory's own configuration that exists (its dot entries:
// config.InHomeConfig), relative to root, for protect to keep read-only:
// what the user's shells, git, ssh and desktop run outside the sandbox.
// Left writable: the commands' writable directories (the tools' caches)
// and those that hold one (~/.cargo for ~/.cargo/registry: the tools
// refuse the rest of them),
// and what is hidden anyway. One that does not exist yet cannot be kept
// from being made (the top level of the workspace stays writable); the
// tools refuse it.
func (s *Sandbox) homeConfig(root string) []string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	if !within(home, root) {
		return nil
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil
	}
	writable := s.writable(home)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !(e.Type().IsRegular() || e.IsDir()) {
			continue
		}
		p := filepath.Join(home, name)
		holdsCache := slices.ContainsFunc(writable, func(w string) bool { return within(w, p) })
		if holdsCache || s.Hides(p) {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// nestedGitDirs returns the .git of the repositories nested in root,
// relative to it: submodules (gitlinks in the index, populated or not)
// and repositories cloned inside that git does not ignore. Nothing
// outside a git repository.
func nestedGitDirs(root string) []string {
	var out []string
	ctx := context.Background()
	if ls, err := gitcmd.Command(ctx, root, "ls-files", "-z", "--stage").Output(); err == nil {
		for rec := range strings.SplitSeq(string(ls), "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if ok && strings.HasPrefix(meta, "160000 ") {
				out = append(out, path+"/.git")
			}
		}
	} else {
		return nil
	}
	if ls, err := gitcmd.Command(ctx, root, "ls-files", "-z", "--others", "--directory", "--exclude-standard").Output(); err == nil {
		for rec := range strings.SplitSeq(string(ls), "\x00") {
			if dir, ok := strings.CutSuffix(rec, "/"); ok && lexists(filepath.Join(root, filepath.FromSlash(dir), ".git")) {
				out = append(out, dir+"/.git")
			}
		}
	}
	return out
}

// IncludedConfigs returns the files of the worktree (relative to root,
// outside .git) that the repository's configuration includes
// (include.path, includeIf.*.path, followed as git follows them): a
// shared .gitconfig the user's .git/config includes is configuration
// like .git/config — a filter, diff or merge driver defined there runs
// in the user's own git and in loom's (its filters) — and must not be
// the agent's to write. Nothing outside a git repository.
func IncludedConfigs(root string) []string {
	out, err := gitcmd.Command(context.Background(), root, "config", "--show-origin", "-z", "--get-regexp", `^include(if\..*)?\.path$`).Output()
	if err != nil {
		return nil
	}
	var rels []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		origin, ok := strings.CutPrefix(recs[i], "file:")
		_, target, found := strings.Cut(recs[i+1], "\n")
		if !ok || !found || target == "" || strings.HasPrefix(target, "~") {
			continue
		}
		if !filepath.IsAbs(origin) {
			origin = filepath.Join(root, origin)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(origin), target)
		}
		rel, err := filepath.Rel(root, filepath.Clean(target))
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		if rel = filepath.ToSlash(rel); rel != ".git" && !strings.HasPrefix(rel, ".git/") {
			rels = append(rels, rel)
		}
	}
	return rels
}

// lexists reports whether p exists, a symbolic link counting as itself.
func lexists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") && home != "" {
		return filepath.Join(home, p[2:])
	}
	return p
}

// cleanAll cleans paths, resolves their symlinks where they exist, drops
// relative ones, and sorts them without repeats.
func cleanAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
