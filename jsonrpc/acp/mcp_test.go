package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// TestClientMCPServers: the MCP servers a session/new names are started
// for the session, and the model can call their tools from the first prompt (after the user's
// approval, through session/request_permission).
func TestClientMCPServers(t *testing.T) {
	everything := mcptest.Find(t).Everything
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, `
[[step]]
match.last_user_contains = "echo"
match.has_tool = "ev__echo"
  [[step.tool_call]]
  name = "ev__echo"
  arguments = '{"message":"hello through the client server"}'

[[step]]
match.last_tool_result_contains = "hello through the client"
text = ["The server echoed it."]

[[step]]
match.last_user_contains = "echo"
repeat = true
text = ["no MCP tool yet"]
`)
	userFile := filepath.Join(t.TempDir(), "loom.toml")
	os.WriteFile(userFile, []byte("[model]\nprovider = \"script\"\nname = \"scripted\"\nscript = \""+script+"\"\n"), 0o644)
	h := startWith(t, "", func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: userFile, Overrides: overrides})
		return cfg, err
	})
	h.initialize(false, false)
	h.client.permit = permitWith(optionAllowOnce)
	resp, err := h.conn.NewSession(testCtx(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "ev", Command: everything, Args: []string{}, Env: []acpsdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	// The first prompt waits for the starting server (mcp.startup_timeout)
	// and offers its tools.
	h.mustPrompt(resp.SessionId, "echo please", acpsdk.StopReasonEndTurn)
	if got := agentText(h.client.snapshot()); !strings.Contains(got, "The server echoed it.") {
		t.Fatalf("the first prompt did not offer the client's MCP server's tool; answer %q", got)
	}
	if len(h.client.permissions) == 0 {
		t.Error("the MCP tool ran without asking")
	}
}
