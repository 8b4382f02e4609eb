package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/config"
)

// Names of the client's configuration layers, as config errors show them.
const (
	overrideInitOptions = "initializationOptions"
	overrideSettings    = "workspace/configuration"
	overridePushed      = "workspace/didChangeConfiguration"
	overrideUser        = "the editor's user settings"
)

// loomSection is the section of the client's settings that is loom's.
const loomSection = "loom"

// userSection is the section a client that declared
// experimental.loom.userSettings answers with the user's own loom
// settings (VS Code's user settings): the user's word, like the user's
// loom.toml, never a repository's, so its widening keys need no trust.
const userSection = "loom.user"

// didChangeConfiguration: the settings changed. As gopls does, a client
// that answers workspace/configuration is asked for the loom section and
// the payload is ignored (it may hold other servers' sections, and pushed
// trust never counts). For a client that cannot be asked, the payload's
// "loom" member is the loom section, or the payload itself when it has
// only loom's own keys; anything else in it is not ours and is ignored.
func (s *Server) didChangeConfiguration(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidChangeConfigurationParams
	if err := decodeParams(protocol.MethodWorkspaceDidChangeConfiguration, raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	pull := s.caps.configuration
	if !pull {
		s.settings = loomSettings(p.Settings)
	}
	s.mu.Unlock()
	if pull {
		s.pullSettings()
		return nil
	}
	s.applyOverrides()
	return nil
}

// pullSettings asks the client for the loom section on a goroutine of
// its own (a handler must not wait for the client), then hands the
// layers to the host. Only the latest pull applies.
func (s *Server) pullSettings() {
	s.mu.Lock()
	s.settingsGen++
	gen := s.settingsGen
	s.mu.Unlock()
	s.goBackground(func() {
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.ClientCallTimeout)
		defer cancel()
		section, user := loomSection, userSection
		items := []protocol.ConfigurationItem{{Section: &section}}
		s.mu.Lock()
		withUser := s.caps.userSettings
		s.mu.Unlock()
		if withUser {
			items = append(items, protocol.ConfigurationItem{Section: &user})
		}
		var res []json.RawMessage
		err := s.callClient(ctx, protocol.MethodWorkspaceConfiguration, &protocol.ConfigurationParams{Items: items}, &res)
		s.mu.Lock()
		if gen != s.settingsGen {
			s.mu.Unlock()
			return
		}
		s.settingsPending = false
		switch {
		case err != nil:
			s.log.Warn("workspace/configuration failed; keeping the previous settings", "err", err)
		case len(res) > 0:
			s.settings = nullToNil(res[0])
			s.userSettings = nil
			if withUser && len(res) > 1 {
				s.userSettings = nullToNil(res[1])
			}
		default:
			s.settings, s.userSettings = nil, nil
		}
		first := s.firstSettings
		s.firstSettings = nil
		s.mu.Unlock()
		if s.ctx.Err() == nil {
			s.applyOverrides()
		}
		if first != nil {
			close(first)
		}
	})
}

// waitFirstSettings waits until the settings asked for at initialized
// were applied, so that a command the client sends before it answered
// (a prompt typed right after VS Code reloaded its window) runs with
// them — with the model they name — rather than without. The ask itself
// is bounded by ClientCallTimeout.
func (s *Server) waitFirstSettings(ctx context.Context) {
	s.mu.Lock()
	first := s.firstSettings
	s.mu.Unlock()
	if first == nil {
		return
	}
	select {
	case <-first:
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
}

// applyOverrides hands the client's configuration layers to the host:
// initializationOptions (the client's own, which vouches for trust only
// when the client declares experimental.loom.workspaceTrust), the user's
// own settings (experimental.loom.userSettings: applied like the user's
// loom.toml), then the settings, whose widening keys follow the workspace
// file's rule.
func (s *Server) applyOverrides() {
	s.mu.Lock()
	name := overrideSettings
	if !s.caps.configuration {
		name = overridePushed
	}
	overrides := []config.Override{
		{Name: overrideInitOptions, JSON: unwrapLoom(s.initOpts), VouchesTrust: s.caps.workspaceTrust},
		{Name: overrideUser, JSON: s.userSettings},
		{Name: name, JSON: s.settings, Pushed: true, Pending: s.settingsPending},
	}
	s.mu.Unlock()
	s.host.SetOverrides(overrides)
}

// trustHow names this client's own way to trust a folder, for the notice
// about ignored settings: the command the client declared
// (experimental.loom.trustCommand), else the command any client can send.
func (s *Server) trustHow() string {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	return trustWords(caps.trustCommand, caps.workspaceTrust)
}

// trustWords says how to trust a folder in a client whose user runs
// loom.trust as command ("" for a client that declared none); an editor
// with workspace trust (trust.workspace in its initializationOptions) may
// also trust the workspace when it asks.
func trustWords(command string, workspaceTrust bool) string {
	switch {
	case command != "" && workspaceTrust:
		return "run " + command + " (or trust the workspace when the editor asks)"
	case command != "":
		return "run " + command + " (any client: the command loom.trust)"
	}
	return "run the command loom.trust (workspace/executeCommand)"
}

// unwrapLoom returns the value of a {"loom": {…}} wrapper (how editors
// usually send a section of their settings), or raw itself.
func unwrapLoom(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		if inner, ok := m[loomSection]; ok {
			return inner
		}
	}
	return raw
}

// loomSettings finds the loom section in a pushed payload: its "loom"
// member, else the payload when every key is one of loom's sections,
// else nothing (the payload is other servers' settings).
func loomSettings(raw []byte) []byte {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nullToNil(raw) // not an object: config reports it
	}
	if inner, ok := m[loomSection]; ok {
		return nullToNil(inner)
	}
	for k := range m {
		if !config.IsSection(k) {
			return nil
		}
	}
	return raw
}

func nullToNil(raw []byte) []byte {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return nil
	}
	return raw
}
