package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Unix sockets.
//
// A unix socket is a way out of any sandbox that leaves it reachable: the
// user's D-Bus session bus and systemd user manager start processes
// outside the sandbox (`systemd-run --user`), docker.sock is root on the
// machine, the ssh-agent signs as the user, a tmux or Emacs server runs
// what it is sent. Landlock (up to ABI 7) does not filter connect(2) on a
// socket named by a path, but a private mount namespace can hide the
// path: the helper replaces the user's runtime directory
// (/run/user/$UID and $XDG_RUNTIME_DIR) by an empty private tmpfs, and
// bind-mounts /dev/null over every other socket bound when the command
// starts (/proc/net/unix lists them, wherever they are: /run, /tmp,
// the home) and over docker's and the ones named by the environment
// ($SSH_AUTH_SOCK, DOCKER_HOST=unix://…). A connect to a hidden socket
// fails with "Connection refused". The sockets the user allow-lists
// (tools.sandbox_sockets) stay, also inside the runtime directory.
// Sockets in the workspace stay, as do those a command makes itself (its
// own servers; a server a command leaves running in /tmp is hidden from
// the next command).
//
// Abstract unix sockets (X11's and D-Bus's "@/tmp/…") have no path:
// Landlock scopes them (ABI 6, Linux 6.12), so a command reaches only
// those made inside its own sandbox, network on or off; on older kernels
// they are reachable with the network on (with it off, the network
// namespace has its own abstract sockets).

// boundSockets returns the paths of the unix sockets bound in this
// network namespace, from /proc/net/unix: every daemon's and program's
// socket, wherever it is (sockets bound by a relative path, and those of
// other network namespaces, are not there).
func boundSockets() []string {
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		// Num RefCount Protocol Flags Type St Inode Path
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		p := strings.TrimRight(line[strings.Index(line, f[7]):], "\n")
		if filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// knownSockets are sockets that give root or the user's rights, which
// may have no listener now (a daemon started on demand): docker's, LXD's,
// and the ones the environment names.
func knownSockets() []string {
	paths := []string{"/run/docker.sock", "/var/run/docker.sock", "/var/snap/lxd/common/lxd/unix.socket", "/var/lib/lxd/unix.socket", "/var/lib/incus/unix.socket"}
	if p := os.Getenv("SSH_AUTH_SOCK"); filepath.IsAbs(p) {
		paths = append(paths, p)
	}
	if p, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && filepath.IsAbs(p) {
		paths = append(paths, p)
	}
	return paths
}

// socketsToHide are the sockets the helper covers: the bound and known
// ones but those in the workspace, in the runtime directories (the tmpfs
// hides them) and the kept ones.
func (s *Sandbox) socketsToHide(runtime, kept []string) []string {
	all := cleanAll(append(boundSockets(), knownSockets()...))
	return slices.DeleteFunc(all, func(p string) bool {
		return within(p, s.p.Root) || keepsSocket(kept, p) || slices.ContainsFunc(runtime, func(d string) bool { return within(p, d) })
	})
}

// runtimeDirs are the user's runtime directories: /run/user/$UID and
// $XDG_RUNTIME_DIR (the session bus, the systemd user manager, gpg-agent,
// pipewire, Wayland, keyrings, rootless docker and podman…). The
// workspace and the temp directory are never one, even if
// $XDG_RUNTIME_DIR says so.
func (s *Sandbox) runtimeDirs() []string {
	dirs := []string{"/run/user/" + strconv.Itoa(os.Getuid())}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		dirs = append(dirs, d)
	}
	dirs = cleanAll(dirs)
	return slices.DeleteFunc(dirs, func(d string) bool {
		return d == "/" || within(s.p.Root, d) || within(d, s.p.Root) || within(os.TempDir(), d)
	})
}

// keptSockets are the allow-listed sockets (tools.sandbox_sockets),
// absolute: "~/" is the home, and "$SSH_AUTH_SOCK" or
// "$XDG_RUNTIME_DIR/…" what the variable says.
func (s *Sandbox) keptSockets(home string) []string {
	var out []string
	for _, p := range s.p.Sockets {
		out = append(out, expandSocket(p, home))
	}
	return cleanAll(out)
}

// expandSocket expands ~/, $SSH_AUTH_SOCK and $XDG_RUNTIME_DIR in an
// allow-listed socket path.
func expandSocket(p, home string) string {
	for _, v := range []string{"SSH_AUTH_SOCK", "XDG_RUNTIME_DIR"} {
		if rest, ok := strings.CutPrefix(p, "$"+v); ok && (rest == "" || rest[0] == '/') {
			if val := os.Getenv(v); filepath.IsAbs(val) {
				return val + rest
			}
			return ""
		}
	}
	return expandHome(p, home)
}

// keepsSocket reports whether the policy lets commands reach the socket
// at path (absolute, clean).
func keepsSocket(kept []string, path string) bool {
	return slices.Contains(kept, path)
}

// socketEnv are the environment variables that name a socket outside the
// sandbox; a command does not get them unless the socket is kept (the
// session bus's address is unix:path=$XDG_RUNTIME_DIR/bus, or an
// abstract one).
var socketEnv = []string{"DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK"}

// commandEnv returns env without the variables of socketEnv whose socket
// is not kept.
func (s *Sandbox) commandEnv(env []string) []string {
	home, _ := os.UserHomeDir()
	kept := s.keptSockets(home)
	return slices.DeleteFunc(env, func(kv string) bool {
		name, val, _ := strings.Cut(kv, "=")
		if !slices.Contains(socketEnv, name) {
			return false
		}
		path := val
		if name == "DBUS_SESSION_BUS_ADDRESS" {
			path = busPath(val)
		}
		clean := cleanAll([]string{path})
		return len(clean) == 0 || !keepsSocket(kept, clean[0])
	})
}

// busPath returns the socket path of a D-Bus address "unix:path=…[,…]",
// or "" for any other address.
func busPath(addr string) string {
	rest, ok := strings.CutPrefix(addr, "unix:path=")
	if !ok || strings.Contains(addr, ";") {
		return ""
	}
	path, _, _ := strings.Cut(rest, ",")
	return path
}

// describeSockets is loom.status's part on unix sockets.
func (s *Sandbox) describeSockets(short func(string) string) string {
	home, _ := os.UserHomeDir()
	if !s.sys.userns {
		return "unix sockets reachable (no user namespaces to hide them)"
	}
	var hidden []string
	for _, d := range s.runtimeDirs() {
		hidden = append(hidden, short(d))
	}
	hidden = append(hidden, "every socket bound outside the workspace", "$SSH_AUTH_SOCK", "docker.sock")
	out := "unix sockets hidden: " + strings.Join(hidden, ", ")
	if kept := s.keptSockets(home); len(kept) > 0 {
		var k []string
		for _, p := range kept {
			k = append(k, short(p))
		}
		out += " (but " + strings.Join(k, ", ") + ")"
	}
	if s.sys.abi < 6 && !s.netnsOff() {
		out += "; abstract sockets reachable (Landlock ABI < 6)"
	} else {
		out += "; abstract sockets: only the command's own"
	}
	return out
}
