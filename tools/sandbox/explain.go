package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"
)

// Blocked is what the sandbox kept a command from doing, as far as its
// output tells: "write to /home/u/.bashrc", "read of /home/u/.ssh/id_rsa",
// "network access (tools.network = \"off\")".
//
// It is a heuristic: Landlock reports nothing to the process but the
// error (EACCES, EPERM, EROFS), so Explain reads the command's output for
// the usual messages of those errors ("Permission denied", "Read-only
// file system", "Operation not permitted", and "Device or resource busy"
// for a read-only mount point moved or removed) with a path that this sandbox
// does block, and for the usual network failures when the network is
// limited. A program that hides its errors gets no explanation; one that
// prints such a message for a path the sandbox blocks gets one even if
// something else denied it.
type Blocked struct {
	// What is the blocked operation, in words.
	What string
	// Hint is one sentence on what the sandbox allows.
	Hint string
}

var (
	denied = regexp.MustCompile(`Permission denied|Read-only file system|Operation not permitted|Device or resource busy|EACCES|EROFS|EPERM|EBUSY`)
	// quoted paths ('x', "x", ‘x’, `x') and a path before ": <error>".
	quoted  = regexp.MustCompile("'([^'\\n]+)'|\"([^\"\\n]+)\"|‘([^’\\n]+)’|`([^'\\n]+)'")
	beforeE = regexp.MustCompile(`(?:^|[\s:])((?:~|\.{1,2})?/?[^\s:'"‘’]+): (?:Permission denied|Read-only file system|Operation not permitted|Device or resource busy)`)
	netFail = regexp.MustCompile(`(?i)network is unreachable|could not resolve host|temporary failure in name resolution|name or service not known|couldn't connect to server|failed to connect|connection refused|/dev/tcp/`)
)

// Explain looks in a command's output for what this sandbox blocked; ok
// is false when nothing in it points at the sandbox. dir is the directory
// the command ran in (for relative paths).
func (s *Sandbox) Explain(output, dir string) (b Blocked, ok bool) {
	if !s.Active() {
		return Blocked{}, false
	}
	pl := s.plan()
	if pl.Network != NetworkOn {
		// First: "connect: Permission denied" is about the network.
		if b, ok := pl.networkBlocked(output); ok {
			return b, true
		}
	}
	home, _ := os.UserHomeDir()
	for line := range strings.Lines(output) {
		if !denied.MatchString(line) {
			continue
		}
		for _, p := range candidates(line) {
			if strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
				continue // bash's network pseudo-files
			}
			if b, ok := pl.pathBlocked(deniedPath(p, home, dir), home); ok {
				return b, true
			}
		}
	}
	return Blocked{}, false
}

// networkBlocked looks in output for a connection the sandbox refused.
func (pl plan) networkBlocked(output string) (Blocked, bool) {
	for line := range strings.Lines(output) {
		if netFail.MatchString(line) || (strings.Contains(line, "connect") && denied.MatchString(line)) {
			what := `network access (tools.network = "off")`
			if pl.Network == NetworkAllow {
				what = "a connection to a port not in tools.network"
			}
			return Blocked{What: what, Hint: "The sandbox limits the network of commands (" + strings.TrimSpace(line) + ")."}, true
		}
	}
	return Blocked{}, false
}

// deniedPath is the absolute, resolved path p names in a command's
// output (~ is home, a relative path is in dir).
func deniedPath(p, home, dir string) string {
	abs := p
	switch {
	case strings.HasPrefix(p, "~/") && home != "":
		abs = filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		abs = filepath.Join(dir, p)
	}
	return resolveExisting(filepath.Clean(abs))
}

// pathBlocked says whether the sandbox, not the user's own rights, is
// what denied abs: a hidden secret directory, or a write outside what
// commands may write (everything but temp and caches when read-only).
func (pl plan) pathBlocked(abs, home string) (Blocked, bool) {
	switch {
	case pl.hides(abs):
		return Blocked{What: "read of " + abs, Hint: "The sandbox hides the secret directories (" +
			strings.Join(shortAll(pl.Hide, home), ", ") + ") from commands."}, true
	case pl.blocksWrite(abs) && userMayWrite(abs) && pl.ReadOnlyRoot:
		return Blocked{What: "write to " + abs, Hint: "Commands run read-only here (plan and ask modes): they may read the workspace " +
			"and write only in the temp directory and the tools' caches."}, true
	case pl.blocksWrite(abs) && userMayWrite(abs):
		return Blocked{What: "write to " + abs, Hint: "Commands may write only in the workspace folder, the temp directory " +
			"and the tools' caches; .git and loom's configuration files are read-only."}, true
	}
	return Blocked{}, false
}

// candidates returns the strings of line that may be the denied path.
func candidates(line string) []string {
	var out []string
	for _, m := range beforeE.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	for _, m := range quoted.FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// userMayWrite reports whether this process (not sandboxed) may write p,
// or create it: if it may not either, the sandbox is not what denied it.
func userMayWrite(p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		if _, err := os.Lstat(q); err == nil {
			return unix.Access(q, unix.W_OK) == nil
		}
		if q == filepath.Dir(q) {
			return false
		}
	}
}

// resolveExisting resolves the symlinks of the longest existing prefix
// of p.
func resolveExisting(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}

func shortAll(paths []string, home string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if home != "" && strings.HasPrefix(p, home+"/") {
			p = "~" + p[len(home):]
		}
		out[i] = p
	}
	return out
}

// String is "blocked by the sandbox: <what>. <hint>".
func (b Blocked) String() string { return "blocked by the sandbox: " + b.What + ". " + b.Hint }
