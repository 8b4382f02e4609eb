package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// HelperArg is the first argument of the hidden entry point that sets
// the sandbox up and execs the command: argv is
// [loom-lsp, HelperArg, command path, command argv...], with the plan in
// the environment ([planVar]).
const HelperArg = "__loom-lsp-sandbox"

// planVar carries the JSON plan to the helper; the helper removes it
// before the command runs.
const planVar = "LOOM_SANDBOX_PLAN"

// plan is the Policy resolved into absolute paths, as the helper gets it.
type plan struct {
	ABI int `json:"abi"`
	// Mounts says the helper runs in its own user and mount namespace,
	// with the capabilities to bind-mount ReadOnly read-only.
	Mounts bool `json:"mounts"`
	// NetNS says the helper runs in its own network namespace (network
	// off): it brings its loopback up.
	NetNS bool     `json:"netns"`
	Root  string   `json:"root"`
	Write []string `json:"write"`
	// ReadOnly are paths under Root kept read-only; Hide are unreadable.
	ReadOnly []string `json:"readOnly"`
	// Pin are directories under Root bind-mounted onto themselves, so
	// that they cannot be renamed or removed (with Mounts only).
	Pin  []string `json:"pin,omitempty"`
	Hide []string `json:"hide"`
	// Show are paths inside hidden directories that stay readable
	// (tools.sandbox_unhide).
	Show []string `json:"show,omitempty"`
	// ReadOnlyRoot says Root is read-only as a whole: it is not granted
	// writes, and it heads ReadOnly (so that, inside a writable directory,
	// it is bind-mounted read-only, or without Mounts left out of that
	// directory's grant); nothing in it is pinned (a pin would be a
	// writable mount inside it).
	ReadOnlyRoot bool `json:"readOnlyRoot,omitempty"`
	// Network is "on", "off" or "allow" (then Ports).
	Network string   `json:"network"`
	Ports   []uint16 `json:"ports,omitempty"`
	// The unix sockets hidden in the mount namespace (sockets.go), with
	// Mounts only: RuntimeDirs are replaced by an empty private tmpfs;
	// the SocketFiles that are sockets are covered with /dev/null; KeepSockets are left alone (and shown again inside
	// the runtime directories).
	RuntimeDirs []string `json:"runtimeDirs,omitempty"`
	SocketFiles []string `json:"socketFiles,omitempty"`
	KeepSockets []string `json:"keepSockets,omitempty"`
}

// plan resolves the policy for one command.
func (s *Sandbox) plan() plan {
	home, _ := os.UserHomeDir()
	ro, pins := s.protect()
	pl := plan{
		ABI:      s.sys.abi,
		Mounts:   s.sys.userns,
		NetNS:    s.netnsOff(),
		Root:     s.p.Root,
		Write:    s.writable(home),
		ReadOnly: ro,
		Pin:      pins,
		Hide:     s.hidden(home),
		Show:     s.unhidden(home),
		Network:  s.p.Network,
		Ports:    ports(s.p.Allow),
	}
	if s.p.ReadOnlyRoot {
		pl.ReadOnlyRoot = true
		pl.ReadOnly = append([]string{s.p.Root}, ro...)
		pl.Pin = nil
	}
	for _, t := range cleanAll(s.p.ReadOnlyTrees) {
		// Never one holding the workspace (it would be read-only too) or
		// inside it (protect's business).
		if filepath.IsAbs(t) && !within(s.p.Root, t) && !within(t, s.p.Root) && lexists(t) {
			pl.ReadOnly = append(pl.ReadOnly, t)
		}
	}
	if pl.Mounts && !s.socketsShown {
		pl.RuntimeDirs = s.runtimeDirs()
		pl.KeepSockets = s.keptSockets(home)
		pl.SocketFiles = s.socketsToHide(pl.RuntimeDirs, pl.KeepSockets)
	}
	return pl
}

// ports returns the ports of "host:port" entries, without repeats.
func ports(allow []string) []uint16 {
	var out []uint16
	for _, a := range allow {
		_, p, _ := net.SplitHostPort(a)
		if x, err := strconv.ParseUint(p, 10, 16); err == nil && x > 0 && !slices.Contains(out, uint16(x)) {
			out = append(out, uint16(x))
		}
	}
	return out
}

// grant is one Landlock rule: a path and whether the whole hierarchy
// under it is granted (else only the directory's own listing).
type grant struct {
	path  string
	whole bool
}

// split grants dir minus the excluded paths: dir whole when nothing
// excluded is inside it; else its listing, and each of its entries split
// in turn (an excluded entry is left out; symlinks are left out, since
// Landlock grants what they point to, which may be excluded).
func split(dir string, exclude []string) []grant {
	var inside []string
	for _, x := range exclude {
		if x == dir {
			return nil
		}
		if within(x, dir) {
			inside = append(inside, x)
		}
	}
	if len(inside) == 0 {
		return []grant{{path: dir, whole: true}}
	}
	out := []grant{{path: dir}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, split(filepath.Join(dir, e.Name()), inside)...)
	}
	return out
}

// blocksWrite reports whether the plan keeps a command from writing p
// (absolute, clean).
func (pl plan) blocksWrite(p string) bool {
	for _, r := range pl.ReadOnly {
		if within(p, r) {
			return true
		}
	}
	if pl.hides(p) {
		return true
	}
	if within(p, pl.Root) {
		if pl.Mounts {
			return false
		}
		// Landlock alone: a directory holding a read-only path is granted
		// entry by entry, so nothing new can be created in it.
		parent := filepath.Dir(p)
		_, err := os.Lstat(p)
		return err != nil && slices.ContainsFunc(pl.ReadOnly, func(r string) bool { return r != parent && within(r, parent) })
	}
	return !slices.ContainsFunc(pl.Write, func(w string) bool { return within(p, w) })
}

// hides reports whether the plan keeps a command from reading p.
func (pl plan) hides(p string) bool {
	return slices.ContainsFunc(pl.Hide, func(h string) bool { return within(p, h) })
}
