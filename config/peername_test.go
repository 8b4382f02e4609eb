package config

import (
	"strings"
	"testing"
)

// TestPeerServerName: another tool's server name as loom names it.
func TestPeerServerName(t *testing.T) {
	tests := map[string]string{
		"github":                       "github",
		"my server.v2":                 "my-server-v2",
		"  @scope/pkg  ":               "scope-pkg",
		"a__b":                         "a_b",
		"a___b":                        "a_b",
		"été":                          "t",
		"日本":                           "",
		"...":                          "",
		strings.Repeat("x", 40) + " y": strings.Repeat("x", 32),
		"Fetch (HTTP)":                 "Fetch-HTTP",
		"a-_b":                         "a-_b",
	}
	for in, want := range tests {
		if got := peerServerName(in); got != want {
			t.Errorf("peerServerName(%q) = %q, want %q", in, got, want)
		}
	}
}
