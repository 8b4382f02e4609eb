package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestClientMCPServerNames: an ACP client's server named "My Files" (a
// space) used to make every prompt fail with "configuration error"; its
// name is made one loom accepts, a bad entry is left out without failing
// the others, and the model reaches the server's tools.
func TestClientMCPServerNames(t *testing.T) {
	everything := mcptest.Find(t).Everything
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, `
[[step]]
match.last_user_contains = "echo"
match.has_tool = "My_Files__echo"
  [[step.tool_call]]
  name = "My_Files__echo"
  arguments = '{"message":"hello through my files"}'

[[step]]
match.last_tool_result_contains = "hello through my files"
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
		{Stdio: &acpsdk.McpServerStdio{Name: "My Files", Command: everything, Args: []string{}, Env: []acpsdk.EnvVariable{}}},
		{Stdio: &acpsdk.McpServerStdio{Name: "no command", Command: "", Args: []string{}, Env: []acpsdk.EnvVariable{}}},
		{Http: &acpsdk.McpServerHttpInline{Name: "bad url", Url: "ftp://example.com", Headers: []acpsdk.HttpHeader{}}},
		{Stdio: &acpsdk.McpServerStdio{Name: strings.Repeat("a very long server name ", 3), Command: everything, Args: []string{}, Env: []acpsdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		from := len(h.client.snapshot())
		h.mustPrompt(resp.SessionId, "echo please", acpsdk.StopReasonEndTurn)
		if got := agentText(h.client.snapshot()[from:]); strings.Contains(got, "The server echoed it.") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the client's MCP server's tool never reached the model; last answer %q", got)
		}
	}
}

func TestMCPServerName(t *testing.T) {
	long := strings.Repeat("a very long server name ", 3)
	for in, want := range map[string]string{
		"My Files": "My_Files", "ev": "ev", "a__b": "a_b", "": "server", "ünï côde": "n_c_de",
	} {
		if got := mcpServerName(in); got != want {
			t.Errorf("mcpServerName(%q) = %q, want %q", in, got, want)
		}
	}
	a, b := mcpServerName(long), mcpServerName(long+"2")
	if len(a) > 32 || len(b) > 32 || a == b || !strings.HasPrefix(a, "a_very_long_server_name") {
		t.Errorf("long names %q and %q: want distinct, at most 32 bytes, keeping their start", a, b)
	}
	for _, n := range []string{a, b, mcpServerName("My Files")} {
		c := config.Default()
		c.MCP.Servers = map[string]config.MCPServer{n: {Command: "x"}}
		if err := c.Validate(); err != nil {
			t.Errorf("%q is refused by config: %v", n, err)
		}
	}
}

// TestClientMCPPrompts: the real server-everything's prompts are offered
// as slash commands (available_commands_update, once the server is ready)
// and "/mcp.ev.args-prompt Paris" reaches the model as the text the
// server's prompts/get gave.
func TestClientMCPPrompts(t *testing.T) {
	everything := mcptest.Find(t).Everything
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, `
[[step]]
match.last_user_contains = "What's weather in Paris?"
text = ["Sunny in Paris."]

[[step]]
repeat = true
text = ["the prompt did not arrive expanded"]
`)
	userFile := filepath.Join(t.TempDir(), "loom.toml")
	os.WriteFile(userFile, []byte("[model]\nprovider = \"script\"\nname = \"scripted\"\nscript = \""+script+"\"\n"), 0o644)
	h := startWith(t, "", func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: userFile, Overrides: overrides})
		return cfg, err
	})
	h.initialize(false, false)
	resp, err := h.conn.NewSession(testCtx(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "ev", Command: everything, Args: []string{}, Env: []acpsdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(resp.SessionId, "/mcp.ev.args-prompt Paris", acpsdk.StopReasonEndTurn)
	if got := agentText(h.client.snapshot()); !strings.Contains(got, "Sunny in Paris.") {
		t.Fatalf("the MCP prompt was not expanded; answer %q", got)
	}
	// Sent before the prompt's turn, so before its response.
	if got := describe(h.client.snapshot()); !strings.Contains(got, "/mcp.ev.args-prompt") {
		t.Fatalf("no available_commands_update with the MCP prompts:\n%s", got)
	}
}
