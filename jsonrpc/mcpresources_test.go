package jsonrpc

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// A real MCP server's resources as "@" items any LSP client can use:
// loom.mcpResources lists server-everything's resources and its resource
// template (with the template's variable); loom.ask attaches a resource
// and the template filled in, read through the server, so the model gets
// their contents; loom.history gives them back as chips with their URIs;
// an unknown server or a template without its value is refused, nothing
// sent.
func TestAttachMCPResource(t *testing.T) {
	e := newEnv(t, envOptions{
		cfg: loomClient,
		script: `
[[step]]
match.last_user_contains = "Resource 3: This is a plaintext resource"
text = ["read resource 3"]
`,
		options: map[string]any{"mcp": map[string]any{"servers": map[string]any{
			"ev": map[string]any{"command": mcptest.Find(t).Everything},
		}}},
	})
	e.await("MCP server ev ready", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if strings.Contains(string(m.Params), `MCP server \"ev\" is ready`) {
				return true
			}
		}
		return false
	})
	var list MCPResourcesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdMCPResources, FolderArgs{}, &list); err != nil {
		t.Fatal(err)
	}
	var static, tmpl MCPResource
	for _, r := range list.Resources {
		if static.URI == "" && strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			static = r
		}
		if r.Template == "demo://resource/dynamic/text/{resourceId}" {
			tmpl = r
		}
	}
	if static.Server != "ev" || static.Name == "" || tmpl.Server != "ev" || len(tmpl.Variables) != 1 || tmpl.Variables[0] != "resourceId" {
		t.Fatalf("loom.mcpResources = %+v", list.Resources)
	}

	for _, bad := range [][]AskContextItem{
		{{Kind: "resource", Server: "nope", URI: static.URI}},
		{{Kind: "resource", Server: "ev", Template: tmpl.Template}},
		{{Kind: "resource", URI: static.URI}},
	} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "x", Context: bad}, nil); err == nil {
			t.Errorf("loom.ask with %+v accepted", bad)
		}
	}

	args := AskArgs{Prompt: "use these", Context: []AskContextItem{
		{Kind: "resource", Server: "ev", URI: static.URI, Label: static.Name},
		{Kind: "resource", Server: "ev", Template: tmpl.Template, Arguments: map[string]string{"resourceId": "3"}},
	}}
	from := len(e.ed.Messages(""))
	if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, args, nil); err != nil {
		t.Fatal(err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if !containsText(e.folder, "read resource 3")(e.ed.Messages("")) {
		t.Fatal("the model did not get the template's resource")
	}
	var h HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &h); err != nil {
		t.Fatal(err)
	}
	var user HistoryMessage
	for _, m := range h.Messages {
		if m.Role == "user" {
			user = m
		}
	}
	want := []HistoryChip{
		{Kind: "resource", Label: static.Name, URI: static.URI},
		{Kind: "resource", Label: "ev: demo://resource/dynamic/text/3", URI: "demo://resource/dynamic/text/3"},
	}
	if user.Content != "use these" || len(user.Context) != len(want) || user.Context[0] != want[0] || user.Context[1] != want[1] {
		t.Errorf("history user message %q with chips %+v, want %+v", user.Content, user.Context, want)
	}
}
