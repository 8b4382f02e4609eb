package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestMapServerEntries: each server entry of the other agents' files maps
// to loom's keys, or says why not.
func TestMapServerEntries(t *testing.T) {
	m := mapCtx{folder: "/w", home: "/h"}
	for _, c := range []struct {
		name  string
		codex bool
		entry map[string]any
		want  map[string]any
		why   string
	}{
		{"stdio", false, map[string]any{"command": "npx", "args": []any{"-y", "${workspaceFolder}/s"}, "env": map[string]any{"A": "${env:A}", "B": "b"}},
			map[string]any{"command": "npx", "args": []any{"-y", "/w/s"}, "env": map[string]any{"A": "A"}, "set_env": map[string]any{"B": "b"}}, ""},
		{"no command", false, map[string]any{"args": []any{"x"}}, nil, "it has no command"},
		{"command not a string", false, map[string]any{"command": 3}, nil, "command is not a string"},
		{"envFile", false, map[string]any{"command": "x", "envFile": ".env"}, nil, "it reads envFile"},
		{"url", false, map[string]any{"type": "http", "url": "https://h/mcp", "headers": map[string]any{"Authorization": "Bearer ${env:TOK}"}},
			map[string]any{"url": "https://h/mcp", "bearer_token_env": "TOK"}, ""},
		{"sse", false, map[string]any{"type": "sse", "url": "https://h/sse"}, nil, "its transport is SSE"},
		{"disabled", false, map[string]any{"command": "x", "disabled": true}, nil, skipQuietly},
		{"codex command", true, map[string]any{"command": "x", "args": []any{"a"}, "env": map[string]any{"K": 1}, "env_vars": []any{"P"}, "tool_timeout_sec": 30.0},
			map[string]any{"command": "x", "args": []any{"a"}, "set_env": map[string]any{"K": "1"}, "env": map[string]any{"P": "P"}, "timeout": "30s"}, ""},
		{"codex url", true, map[string]any{"url": "https://h/mcp", "bearer_token_env_var": "T", "env_http_headers": map[string]any{"X": "V"}},
			map[string]any{"url": "https://h/mcp", "bearer_token_env": "T", "headers": map[string]any{"X": "${V}"}}, ""},
		{"codex cwd", true, map[string]any{"command": "x", "cwd": "/tmp"}, nil, "it sets cwd"},
		{"codex neither", true, map[string]any{"args": []any{"a"}}, nil, "it has neither command nor url"},
	} {
		var got map[string]any
		var why string
		if c.codex {
			got, why = mapCodexServer(c.entry, m)
		} else {
			got, why = mapJSONServer(c.entry, m)
		}
		if c.why != "" {
			if !strings.Contains(why, c.why) {
				t.Errorf("%s: why %q, want %q", c.name, why, c.why)
			}
			continue
		}
		if why != "" || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v (%q), want %v", c.name, got, why, c.want)
		}
	}
}
