package config

import (
	"strings"
	"time"
)

// The values of tools.diagnostics.
const (
	// DiagnosticsAuto gives the model the problems its edits introduced,
	// from the editor's language servers or, where no editor tells, from
	// a language server loom starts in the commands' sandbox.
	DiagnosticsAuto = "auto"
	// DiagnosticsOff never asks.
	DiagnosticsOff = "off"
)

// DefaultDiagnosticsWait bounds the wait for a language server's answer
// after an edit (tools.diagnostics_wait): a warm gopls answers a small
// package in well under a second; a cold one is not waited for.
const DefaultDiagnosticsWait = 3 * time.Second

// LanguageServer is a language server loom may start for files of the
// given extensions ([tools.language_servers.NAME]); it is tried before
// the built-in ones. Setting one in a repository's .loom.toml is a
// widening key: it runs a program.
type LanguageServer struct {
	// Command is the program (looked up on PATH) and its arguments.
	Command []string `toml:"command"`
	// Extensions are the file extensions it checks (".zig").
	Extensions []string `toml:"extensions"`
	// Language is the LSP language id sent for the files; "" uses the
	// extension without its dot.
	Language string `toml:"language"`
	// InitOptions are sent as initialize's initializationOptions; unset
	// for a server named like a built-in one (gopls…) means the built-in
	// one's.
	InitOptions map[string]any `toml:"init_options"`
}

func (c Config) validateDiagnostics(add func(*Error)) {
	t := c.Tools
	switch t.Diagnostics {
	case DiagnosticsAuto, DiagnosticsOff:
	default:
		add(c.keyErr("tools.diagnostics", "invalid value %q: want %q or %q", t.Diagnostics, DiagnosticsAuto, DiagnosticsOff))
	}
	if t.DiagnosticsWait.Duration < 0 {
		add(c.keyErr("tools.diagnostics_wait", "must be >= 0, got %v", t.DiagnosticsWait))
	}
	switch t.DiagnosticsSeverity {
	case "error", "warning", "info", "hint":
	default:
		add(c.keyErr("tools.diagnostics_severity", "invalid severity %q: want \"error\", \"warning\", \"info\" or \"hint\"", t.DiagnosticsSeverity))
	}
	for name, ls := range t.LanguageServers {
		key := "tools.language_servers." + name
		if len(ls.Command) == 0 || strings.TrimSpace(ls.Command[0]) == "" {
			add(c.keyErr(key+".command", "a language server needs a command"))
		}
		if len(ls.Extensions) == 0 {
			add(c.keyErr(key+".extensions", "a language server needs the file extensions it checks (\".zig\")"))
		}
		for _, e := range ls.Extensions {
			if !strings.HasPrefix(e, ".") || len(e) < 2 {
				add(c.keyErr(key+".extensions", "an extension starts with a dot: %q", e))
			}
		}
	}
}
