package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

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
	add := func(name string, entry map[string]any, bad string) {
		if bad != "" {
			// One bad entry never fails the others (nor the configuration).
			a.log.Warn("MCP server of the client left out", "server", name, "why", bad)
			return
		}
		n := mcpServerName(name)
		for i := 2; named[n] != nil; i++ {
			n = mcpServerName(fmt.Sprintf("%s-%d", name, i))
		}
		if n != name {
			a.log.Info("MCP server of the client renamed to what a tool name allows", "server", name, "as", n)
		}
		named[n] = entry
	}
	for _, s := range servers {
		switch {
		case s.Stdio != nil:
			if len(s.Stdio.Env) > 0 {
				a.log.Warn("MCP server: the client's environment values are not passed (name the variables in loom.toml's [mcp.servers] env instead)", "server", s.Stdio.Name)
			}
			bad := ""
			if strings.TrimSpace(s.Stdio.Command) == "" {
				bad = "no command"
			}
			add(s.Stdio.Name, map[string]any{"command": s.Stdio.Command, "args": s.Stdio.Args}, bad)
		case s.Http != nil:
			if len(s.Http.Headers) > 0 {
				a.log.Warn("MCP server: the client's HTTP headers are not passed", "server", s.Http.Name)
			}
			bad := ""
			if u, err := url.Parse(s.Http.Url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad = "not an http(s) URL: " + s.Http.Url
			}
			add(s.Http.Name, map[string]any{"url": s.Http.Url}, bad)
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

// maxServerName is the longest MCP server name loom.toml accepts.
const maxServerName = 32

// mcpServerName makes an editor's MCP server name one loom accepts (up to
// 32 letters, digits, '-' or '_', no "__": the model sees its tools as
// "<name>__<tool>"): other characters become '_' ("My Files" is
// "My_Files"), and a longer name keeps its start and a hash of the whole,
// so that two long names stay apart.
func mcpServerName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		default:
			if !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	n := strings.Trim(b.String(), "_")
	if n == "" {
		n = "server"
	}
	if len(n) > maxServerName || n != name && len(name) > maxServerName {
		sum := sha256.Sum256([]byte(name))
		h := hex.EncodeToString(sum[:])[:8]
		keep := min(len(n), maxServerName-len(h)-1)
		n = strings.TrimRight(n[:keep], "_") + "_" + h
	}
	return n
}
