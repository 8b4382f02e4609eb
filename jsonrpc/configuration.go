package jsonrpc

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/config"
)

// Names of the client's configuration layers, as config errors show them.
const (
	overrideInitOptions = "initializationOptions"
	overrideSettings    = "workspace/didChangeConfiguration"
)

// didChangeConfiguration replaces the settings layer; sessions reload.
// The settings may be the loom object itself or wrap it as {"loom": …}.
func (s *Server) didChangeConfiguration(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p protocol.DidChangeConfigurationParams
	if err := decodeParams(protocol.MethodWorkspaceDidChangeConfiguration, raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	s.settings = unwrapLoom(p.Settings)
	s.mu.Unlock()
	s.applyOverrides()
	return nil
}

// applyOverrides hands the client's configuration layers to the host.
func (s *Server) applyOverrides() {
	s.mu.Lock()
	overrides := []config.Override{
		{Name: overrideInitOptions, JSON: unwrapLoom(s.initOpts)},
		{Name: overrideSettings, JSON: s.settings},
	}
	s.mu.Unlock()
	s.host.SetOverrides(overrides)
}

// unwrapLoom returns the value of a {"loom": {…}} wrapper (how editors
// usually send a section of their settings), or raw itself.
func unwrapLoom(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		if inner, ok := m["loom"]; ok {
			return inner
		}
	}
	return raw
}
