package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
)

// A go-sdk server asks mid-call (elicitation/create, form mode) for a
// form whose only field has a default: the call's asker is asked,
// naming the server, the message and what accepting sends; allowed →
// accept with the defaults, denied → decline, no answer → cancel, no
// asker → decline without asking. server-everything's form, with a
// required field and no default, is declined without asking.
func TestElicitation(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "deploy", Description: "asks first"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Deploy to production?", RequestedSchema: map[string]any{
			"type": "object", "required": []string{"confirm"},
			"properties": map[string]any{"confirm": map[string]any{"type": "boolean", "default": true}},
		}})
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("action=%s content=%v", res.Action, res.Content)}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	m := newManager(t, Spec{Name: "asking", URL: ts.URL}, everything(t, "ev"))
	waitUntil(t, m, "both servers", func() bool {
		return toolByName(m, "asking__deploy") != nil && toolByName(m, "ev__trigger-elicitation-request") != nil
	})
	var asked []string
	for _, c := range []struct {
		name string
		ask  func(context.Context, string) (bool, error)
		want string
	}{
		{"allowed", func(_ context.Context, q string) (bool, error) { asked = append(asked, q); return true, nil }, "action=accept content=map[confirm:true]"},
		{"denied", func(_ context.Context, q string) (bool, error) { asked = append(asked, q); return false, nil }, "action=decline"},
		{"no answer", func(_ context.Context, q string) (bool, error) {
			asked = append(asked, q)
			return false, errors.New("timeout")
		}, "action=cancel"},
		{"no one to ask", nil, "action=decline"},
	} {
		asked = nil
		res := run(t, toolByName(m, "asking__deploy"), &tools.Env{Elicit: c.ask}, `{}`)
		if !strings.Contains(res.Text, c.want) {
			t.Errorf("%s: %q, want %q", c.name, res.Text, c.want)
		}
		if c.ask != nil && (len(asked) != 1 || !strings.Contains(asked[0], "MCP server asking asks: Deploy to production?") || !strings.Contains(asked[0], "confirm=true")) {
			t.Errorf("%s: asked %q", c.name, asked)
		}
	}
	asked = nil
	res := run(t, toolByName(m, "ev__trigger-elicitation-request"), &tools.Env{Elicit: func(_ context.Context, q string) (bool, error) {
		asked = append(asked, q)
		return true, nil
	}}, `{}`)
	if len(asked) != 0 || !strings.Contains(res.Text, "declined") {
		t.Errorf("server-everything's form: asked %q, result %q; want declined without asking", asked, res.Text)
	}
}
