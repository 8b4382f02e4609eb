package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A repository's .loom.toml may only lower the caps on subagents: what
// it lowers applies at once; what it raises above the user's own is
// held back (a widening key) and named in the trust notice, in an
// untrusted folder. The user's own file sets them freely.
func TestRepositoryOnlyNarrowsSubagentCaps(t *testing.T) {
	xdg := isolate(t)
	write(t, filepath.Join(xdg, "loom"), "loom.toml", "[subagents]\nmax_running = 3\ntimeout = \"5m\"\nmodels = [\"claude-haiku-4-5\"]\n")
	folder := t.TempDir()
	write(t, folder, ".loom.toml", `
[subagents]
max_depth = 3
max_running = 2
max_per_turn = 50
max_tokens = 1000
timeout = "1h"
models = ["the-most-expensive-model"]
`)
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Subagents
	want := Subagents{MaxDepth: 1, MaxRunning: 2, MaxPerTurn: 8, MaxTokens: 1000, MaxTurnTokens: 1_000_000, Timeout: Duration{5 * time.Minute},
		Models: []string{"claude-haiku-4-5"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("subagents: %s\nwant:        %s", got, want)
	}
	notice := c.TrustNotice("")
	for _, key := range []string{"subagents.max_depth", "subagents.max_per_turn", "subagents.timeout", "subagents.models"} {
		if !strings.Contains(notice, key) {
			t.Errorf("the trust notice does not name %s:\n%s", key, notice)
		}
	}
	for _, key := range []string{"subagents.max_running", "subagents.max_tokens"} {
		if strings.Contains(notice, key) {
			t.Errorf("the trust notice names %s, which narrows:\n%s", key, notice)
		}
	}
}

// The caps are validated: 0 subagents running, a negative depth or no
// time are errors naming the key.
func TestSubagentCapsValidated(t *testing.T) {
	c := Default()
	c.Subagents.MaxRunning, c.Subagents.MaxDepth, c.Subagents.Timeout = 0, -1, Duration{}
	err := c.Validate()
	for _, key := range []string{"subagents.max_running", "subagents.max_depth", "subagents.timeout"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("no error names %s: %v", key, err)
		}
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}
