package config

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The sandbox keys of [Tools]: where commands (bash, stdio MCP servers)
// may write, what they may not read, and what network they reach.
//
//	[tools]
//	sandbox = "workspace"           # or "off"
//	sandbox_write = ["~/scratch"]   # more writable directories
//	sandbox_hide = ["~/.kube"]      # more unreadable directories
//	sandbox_unhide = ["~/.npmrc"]   # hidden by default, readable here
//	sandbox_sockets = ["$SSH_AUTH_SOCK", "/run/docker.sock"]  # reachable unix sockets
//	network = "on"                  # "off", or ["localhost:5432", "proxy.golang.org:443"]

// Sandbox modes, the values of [Tools.Sandbox].
const (
	// SandboxWorkspace confines commands: writes to the workspace folder,
	// the temp dir and caches; no reads of the secret directories.
	SandboxWorkspace = "workspace"
	// SandboxOff runs commands with the user's full permissions.
	SandboxOff = "off"
)

// Network modes, the values of [Network.Mode].
const (
	NetworkOn    = "on"    // any host
	NetworkOff   = "off"   // none
	NetworkAllow = "allow" // only Network.Allow
)

// Network is tools.network: "on", "off", or a list of "host:port" a
// command may connect to.
type Network struct {
	// Mode is NetworkOn, NetworkOff or NetworkAllow.
	Mode string
	// Allow lists "host:port" entries, only for NetworkAllow.
	Allow []string
}

// configValue is implemented by a field type that takes a raw TOML or
// JSON value of more than one shape (a string or an array).
type configValue interface {
	setConfigValue(val any) error
}

// setConfigValue takes "on", "off" or an array of "host:port" strings.
func (n *Network) setConfigValue(val any) error {
	switch v := val.(type) {
	case string:
		if v != NetworkOn && v != NetworkOff {
			return fmt.Errorf(`want "on", "off" or an array of "host:port", got string %q`, v)
		}
		*n = Network{Mode: v}
		return nil
	case []any:
		allow := make([]string, 0, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf(`[%d]: want a "host:port" string, got %s`, i, describe(x))
			}
			if err := checkHostPort(s); err != nil {
				return fmt.Errorf("[%d]: %v", i, err)
			}
			allow = append(allow, s)
		}
		*n = Network{Mode: NetworkAllow, Allow: allow}
		return nil
	}
	return fmt.Errorf(`want "on", "off" or an array of "host:port", got %s`, describe(val))
}

// checkHostPort accepts "host:port" with a port in 1..65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf(`%q is not "host:port" (e.g. "localhost:8080")`, s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port must be a number in 1..65535", s)
	}
	return nil
}

// String is the value as written in TOML.
func (n Network) String() string {
	if n.Mode == NetworkAllow {
		q := make([]string, len(n.Allow))
		for i, a := range n.Allow {
			q[i] = strconv.Quote(a)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	if n.Mode == "" {
		return NetworkOn
	}
	return n.Mode
}

// MarshalTOML writes the value as the user would (for Config.String).
func (n Network) MarshalTOML() ([]byte, error) {
	if n.Mode == "" || n.Mode == NetworkOn || n.Mode == NetworkOff {
		return []byte(strconv.Quote(n.String())), nil
	}
	return []byte(n.String()), nil
}

// Ports returns the ports of the allow-list, sorted, without repeats.
func (n Network) Ports() []uint16 {
	var ports []uint16
	for _, a := range n.Allow {
		_, p, _ := net.SplitHostPort(a)
		if x, err := strconv.Atoi(p); err == nil {
			ports = append(ports, uint16(x))
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}

// SandboxKeyWidens reports whether a layer setting the sandbox key (a
// dotted path) to val gives commands more than the defaults do: such a
// value from a repository's untrusted .loom.toml must be ignored. A
// narrowing value (sandbox = "workspace", network = "off", a list that
// only adds hidden directories) never widens. It is false for keys that
// are not sandbox keys.
func SandboxKeyWidens(key string, val any) bool {
	switch key {
	case "tools.sandbox":
		s, _ := val.(string)
		return s != SandboxWorkspace
	case "tools.network":
		// "on" widens a user's "off"; an allow-list widens "off" too.
		s, _ := val.(string)
		return s != NetworkOff
	case "tools.sandbox_write", "tools.sandbox_unhide", "tools.sandbox_sockets":
		return true
	case "tools.sandbox_hide":
		// A later layer replaces the list: one that sets it may drop the
		// user's own entries (the built-in ones always stay).
		return true
	}
	return false
}

// validateSandbox checks the sandbox keys.
func (c Config) validateSandbox(add func(*Error)) {
	t := c.Tools
	switch t.Sandbox {
	case SandboxWorkspace, SandboxOff:
	default:
		add(c.keyErr("tools.sandbox", "invalid value %q: want %q or %q", t.Sandbox, SandboxWorkspace, SandboxOff))
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"tools.sandbox_write", t.SandboxWrite}, {"tools.sandbox_hide", t.SandboxHide}, {"tools.sandbox_unhide", t.SandboxUnhide}} {
		for _, p := range list.paths {
			if !filepath.IsAbs(p) && p != "~" && !strings.HasPrefix(p, "~/") {
				add(c.keyErr(list.key, "%q is not an absolute path (or one starting with ~/)", p))
			}
		}
	}
	for _, p := range t.SandboxSockets {
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") && p != "$SSH_AUTH_SOCK" && p != "$XDG_RUNTIME_DIR" && !strings.HasPrefix(p, "$XDG_RUNTIME_DIR/") {
			add(c.keyErr("tools.sandbox_sockets", "%q is not an absolute path (or one starting with ~/, $XDG_RUNTIME_DIR/, or $SSH_AUTH_SOCK)", p))
		}
	}
}
