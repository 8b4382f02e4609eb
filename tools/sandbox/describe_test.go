package sandbox

import "testing"

// TestDescribeNetworkAndReadOnly: the network and read-only clauses of
// Describe's line, on each kind of machine.
func TestDescribeNetworkAndReadOnly(t *testing.T) {
	tests := []struct {
		p       Policy
		sys     system
		net, ro string
	}{
		{Policy{Network: NetworkOn}, system{abi: 6, userns: true}, "on", ".git and loom's config read-only"},
		{Policy{Network: NetworkAllow, Allow: []string{"proxy.golang.org:443", "127.0.0.1:8080"}}, system{abi: 4, userns: true},
			"only proxy.golang.org:443, 127.0.0.1:8080 (TCP, by port)", ".git and loom's config read-only"},
		{Policy{Network: NetworkOff}, system{abi: 4}, "off",
			".git and loom's config read-only (no user namespaces: new files at the folder's top level are blocked)"},
		{Policy{Network: NetworkOff}, system{abi: 3, userns: true}, "off", ".git and loom's config read-only"},
		{Policy{Network: NetworkOff, ReadOnlyRoot: true}, system{abi: 3, why: "no Landlock network rules (ABI 3)"},
			"on (cannot be turned off here: no Landlock network rules (ABI 3))", "the workspace read-only"},
	}
	for _, tt := range tests {
		s := &Sandbox{p: tt.p, sys: tt.sys}
		if got := s.describeNetwork(); got != tt.net {
			t.Errorf("%+v on %+v: network %q, want %q", tt.p, tt.sys, got, tt.net)
		}
		if got := s.describeReadOnly(); got != tt.ro {
			t.Errorf("%+v on %+v: %q, want %q", tt.p, tt.sys, got, tt.ro)
		}
	}
}
