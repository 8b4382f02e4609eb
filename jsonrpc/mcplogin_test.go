package jsonrpc

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// loom.mcpLogin in an editor, against the TypeScript SDK's example OAuth
// server: the server is "needs sign-in" in loom.status, and said so with
// the way in; the command opens the authorization URL through
// window/showDocument (external), which the fake editor follows as a
// browser would; once signed in the server restarts and is ready;
// loom.mcpLogout makes it need sign-in again.
func TestMCPLoginThroughShowDocument(t *testing.T) {
	srv := mcptest.StartOAuth(t, true)
	var mu sync.Mutex
	var shown []string
	e := newEnv(t, envOptions{
		options: map[string]any{"mcp": map[string]any{"servers": map[string]any{"demo": map[string]any{"url": srv.URL}}}},
		hooks: fakeeditor.Hooks{ShowDocument: func(u string, external bool) bool {
			mu.Lock()
			shown = append(shown, u)
			mu.Unlock()
			if !external {
				return false
			}
			go func() {
				if resp, err := http.Get(u); err == nil {
					resp.Body.Close()
				}
			}()
			return true
		}},
	})
	demo := func(st workspace.Status) mcp.ServerStatus {
		for _, s := range st.MCPServers {
			if s.Name == "demo" {
				return s
			}
		}
		return mcp.ServerStatus{}
	}
	e.statusUntil("demo needs sign-in", func(st workspace.Status) bool { return demo(st).State == mcp.StateNeedsSignIn })
	e.await("the sign-in message", hasMethod(protocol.MethodWindowShowMessage, "loom-lsp mcp login demo"))

	var res MCPLoginResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdMCPLogin, MCPServerArgs{Server: "demo"}, &res); err != nil {
		t.Fatalf("loom.mcpLogin: %v; got %s", err, e.ed.Messages(""))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(res.Message, `signed in to MCP server "demo"`) || len(shown) != 1 || !strings.Contains(shown[0], "code_challenge=") {
		t.Errorf("loom.mcpLogin = %+v; shown %q", res, shown)
	}
	e.statusUntil("demo ready", func(st workspace.Status) bool { return demo(st).State == mcp.StateReady && demo(st).Tools > 0 })

	if err := e.ed.ExecuteCommand(e.ctx, CmdMCPLogout, MCPServerArgs{Server: "demo"}, &res); err != nil || !strings.Contains(res.Message, "signed out") {
		t.Fatalf("loom.mcpLogout = %+v, %v", res, err)
	}
	e.statusUntil("demo needs sign-in again", func(st workspace.Status) bool { return demo(st).State == mcp.StateNeedsSignIn })
}
