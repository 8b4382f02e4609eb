package acp

import (
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// mcpOverrideName names the client's MCP servers as a configuration source.
const mcpOverrideName = "the ACP client's mcpServers"

// useMCPServers hands the MCP servers of a session/new, load or resume to
// the sessions as the editor's configuration layer (as an LSP client's
// initializationOptions are): [mcp.servers.NAME] with the command and
// arguments, or the URL of a streamable HTTP server. The host serves every
// folder with one configuration, so the latest session's servers apply to
// all; servers that did not change keep running. Environment values and
// HTTP headers are not passed (loom.toml passes only variables it names,
// never values), and SSE servers are not supported: a log line says so.
func (a *agent) useMCPServers(servers []acpsdk.McpServer) {
	named := map[string]any{}
	for _, s := range servers {
		switch {
		case s.Stdio != nil:
			if len(s.Stdio.Env) > 0 {
				a.log.Warn("MCP server: the client's environment values are not passed (name the variables in loom.toml's [mcp.servers] env instead)", "server", s.Stdio.Name)
			}
			named[s.Stdio.Name] = map[string]any{"command": s.Stdio.Command, "args": s.Stdio.Args}
		case s.Http != nil:
			if len(s.Http.Headers) > 0 {
				a.log.Warn("MCP server: the client's HTTP headers are not passed", "server", s.Http.Name)
			}
			named[s.Http.Name] = map[string]any{"url": s.Http.Url}
		case s.Sse != nil:
			a.log.Warn("MCP server over SSE is not supported; use stdio or streamable HTTP", "server", s.Sse.Name)
		default:
			a.log.Warn("MCP server of an unknown transport ignored")
		}
	}
	var layer []byte
	if len(named) > 0 {
		layer, _ = json.Marshal(map[string]any{"mcp": map[string]any{"servers": named}})
	}
	a.mu.Lock()
	same := string(layer) == a.mcpLayer
	a.mcpLayer = string(layer)
	a.mu.Unlock()
	if same {
		return
	}
	a.log.Info("the client's MCP servers", "servers", len(named))
	a.host.SetOverrides([]config.Override{{Name: mcpOverrideName, JSON: layer}})
}
