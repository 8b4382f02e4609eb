package workspace

import (
	"reflect"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// sandboxFor returns the sandbox commands run in under cfg: nil when
// tools.sandbox = "off". The session's current sandbox is kept when the
// policy did not change, so that what it says once (no Landlock here)
// is said once, and MCP servers are not restarted by a reload.
func (s *Session) sandboxFor(cfg config.Config) *sandbox.Sandbox {
	if cfg.Tools.Sandbox == config.SandboxOff {
		return nil
	}
	p := sandbox.Policy{
		Root:    s.folder,
		Write:   cfg.Tools.SandboxWrite,
		Hide:    cfg.Tools.SandboxHide,
		Network: cfg.Tools.Network.Mode,
		Allow:   cfg.Tools.Network.Allow,
	}
	if s.sandbox != nil && reflect.DeepEqual(s.sandbox.Policy(), p) {
		return s.sandbox
	}
	return sandbox.New(p)
}

// sandboxStatus is loom.status's line about the sandbox.
func (s *Session) sandboxStatus() string {
	return s.sandbox.Describe()
}
