package workspace

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

// The MCP server rules live beside the command rules in the state
// directory: a second host (the next start) reads both back; editing one
// kind keeps the other; names no server could have are refused, and left
// out when a hand-edited file holds them.
func TestMCPServerRulesPersist(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	newHost := func() *Host {
		h := NewHost(HostOptions{StateDir: state, Config: func(string, []config.Override) (config.Config, error) { return config.Default(), nil }})
		t.Cleanup(h.Close)
		return h
	}
	h := newHost()
	if _, err := h.Rules().AddCommand(folder, cmdrules.Rule{Exact: "npm test"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"files", "ev", "files"} {
		if err := h.Rules().AddMCPServer(folder, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"", "a__b", "has space", strings.Repeat("x", 33)} {
		if err := h.Rules().AddMCPServer(folder, bad); err == nil {
			t.Errorf("AddMCPServer(%q) accepted", bad)
		}
	}
	h2 := newHost()
	if got, _ := h2.Rules().MCPServers(folder); !slices.Equal(got, []string{"files", "ev"}) {
		t.Errorf("read back %v", got)
	}
	if found, err := h2.Rules().RemoveMCPServer(folder, "files"); !found || err != nil {
		t.Errorf("remove files: %v, %v", found, err)
	}
	h3 := newHost()
	if got, _ := h3.Rules().MCPServers(folder); !slices.Equal(got, []string{"ev"}) {
		t.Errorf("after removal %v", got)
	}
	if got, _ := h3.Rules().Commands(folder); !slices.Equal(got, []cmdrules.Rule{{Exact: "npm test"}}) {
		t.Errorf("command rules %v", got)
	}
	path, err := h3.rules.file(folder)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"allowMcpServers":["ok","a__b","../x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := newHost().Rules().MCPServers(folder); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("hand-edited file read as %v", got)
	}
}

// TestFetchHostRules: an "always allow" for a fetch's host is kept for the
// folder — an IPv6 address as url.Hostname gives it too (http://[::1]:8080/
// → "::1") — while a host with a port, a path or a zone is refused.
func TestFetchHostRules(t *testing.T) {
	h := NewHost(HostOptions{StateDir: t.TempDir(), Config: func(string, []config.Override) (config.Config, error) { return config.Default(), nil }})
	folder := t.TempDir()
	for _, host := range []string{"Example.ORG", "::1", "127.0.0.1"} {
		if err := h.Rules().AddFetchHost(folder, host); err != nil {
			t.Errorf("AddFetchHost(%q): %v", host, err)
		}
	}
	for _, bad := range []string{"example.org:80", "a/b", "fe80::1%eth0", ""} {
		if err := h.Rules().AddFetchHost(folder, bad); err == nil {
			t.Errorf("AddFetchHost(%q) accepted", bad)
		}
	}
	got, err := h.Rules().FetchHosts(folder)
	if err != nil || strings.Join(got, " ") != "example.org ::1 127.0.0.1" {
		t.Fatalf("FetchHostRules = %v, %v", got, err)
	}
}
