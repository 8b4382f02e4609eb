package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// An MCP server's question in an ACP client (the go-sdk asking server
// over stdio, given in session/new): session/request_permission asks
// whether to send a form's defaults, naming the server, its question
// and what is sent; allowed, the defaults reach the server. A URL is
// asked the same way (the user opens it); a form with a required field
// without a default is declined without asking.
func TestClientMCPElicitation(t *testing.T) {
	asker := mcptest.AskStdio(t)
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, `
[[step]]
match.last_user_contains = "confirm"
  [[step.tool_call]]
  name = "asking__confirm"
  arguments = '{}'

[[step]]
match.last_user_contains = "deploy"
  [[step.tool_call]]
  name = "asking__deploy"
  arguments = '{}'

[[step]]
match.last_user_contains = "connect"
  [[step.tool_call]]
  name = "asking__connect"
  arguments = '{}'

[[step]]
match.last_role = "tool"
repeat = true
text = ["done"]
`)
	userFile := filepath.Join(t.TempDir(), "loom.toml")
	os.WriteFile(userFile, []byte("[model]\nprovider = \"script\"\nname = \"scripted\"\nscript = \""+script+"\"\n"), 0o644)
	h := startWith(t, "", func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: userFile, Overrides: overrides})
		return cfg, err
	})
	var mu sync.Mutex
	var titles []string
	h.client.mu.Lock()
	h.client.permit = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		mu.Lock()
		if p.ToolCall.Title != nil {
			titles = append(titles, *p.ToolCall.Title)
		}
		mu.Unlock()
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: optionAllowOnce}}}, nil
	}
	h.client.mu.Unlock()
	h.initialize(false, false)
	resp, err := h.conn.NewSession(testCtx(t), acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "asking", Command: asker, Args: []string{}, Env: []acpsdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	results := func() string {
		var b strings.Builder
		for _, u := range h.client.snapshot() {
			if c := u.Update.ToolCallUpdate; c != nil {
				for _, x := range c.Content {
					if x.Content != nil && x.Content.Content.Text != nil {
						b.WriteString(x.Content.Content.Text.Text + "\n")
					}
				}
				if c.RawOutput != nil {
					raw, _ := json.Marshal(c.RawOutput)
					b.Write(append(raw, '\n'))
				}
			}
		}
		return b.String()
	}
	h.mustPrompt(resp.SessionId, "confirm", acpsdk.StopReasonEndTurn)
	h.mustPrompt(resp.SessionId, "deploy", acpsdk.StopReasonEndTurn)
	h.mustPrompt(resp.SessionId, "connect", acpsdk.StopReasonEndTurn)
	got := results()
	for _, want := range []string{`action=accept content={confirm=true region="eu"}`, "action=decline", "action=accept"} {
		if !strings.Contains(got, want) {
			t.Errorf("tool results lack %q:\n%s", want, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(titles, "\n")
	if !strings.Contains(all, "MCP server asking asks: Go ahead?\nAllow sends: confirm=true, region=eu") ||
		!strings.Contains(all, "MCP server asking asks: Connect your account\nOpen this page yourself, then allow: https://example.com/connect?id=e1") ||
		strings.Contains(all, "Deploy where") {
		t.Errorf("permission requests:\n%s", all)
	}
}
