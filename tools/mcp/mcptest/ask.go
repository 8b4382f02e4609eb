package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AskForm is the form (raw JSON, so that its fields keep their order) the asking server's deploy tool requests: an enum
// with titles, a bounded integer with a default, a password, a boolean
// with a default and an optional text. (The SDK refuses format "password" in a form: a secret is known by its name.)
var AskForm = json.RawMessage(`{"type": "object", "required": ["env", "api_token"], "properties": {
	"env": {"type": "string", "title": "Environment", "description": "Where to deploy",
		"enum": ["prod", "staging"], "enumNames": ["Production", "Staging"]},
	"replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10, "default": 2},
	"api_token": {"type": "string", "title": "API token", "minLength": 8},
	"notify": {"type": "boolean", "title": "Notify the team", "default": true},
	"note": {"type": "string", "title": "Note", "maxLength": 40}}}`)

// ConfirmForm is the confirm tool's form: every required field has a
// default.
var ConfirmForm = json.RawMessage(`{"type": "object", "required": ["confirm"], "properties": {
	"confirm": {"type": "boolean", "title": "Go ahead", "default": true},
	"region": {"type": "string", "enum": ["eu", "us"], "default": "eu"}}}`)

// NewAskServer is an MCP server (go-sdk's server package) whose tools ask
// the user mid-call: deploy requests AskForm (confirm: ConfirmForm) and answers with the action
// and the content it got (the token's length, not the token); connect
// requests a URL (form https://example.com/connect?id=…), and after an
// accept sends notifications/elicitation/complete.
func NewAskServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "deploy", Description: "deploys, asking where to"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, ok := req.Params.InputResponses["deploy"].(*sdk.ElicitResult)
		if !ok {
			return ask("deploy", &sdk.ElicitParams{Mode: "form", Message: "Deploy where, and with which token?", RequestedSchema: AskForm}), nil, nil
		}
		return text(fmt.Sprintf("action=%s content=%s", res.Action, describe(res.Content))), nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "confirm", Description: "asks for a confirmation whose fields all have defaults"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, ok := req.Params.InputResponses["confirm"].(*sdk.ElicitResult)
		if !ok {
			return ask("confirm", &sdk.ElicitParams{Mode: "form", Message: "Go ahead?", RequestedSchema: ConfirmForm}), nil, nil
		}
		return text(fmt.Sprintf("action=%s content=%s", res.Action, describe(res.Content))), nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "connect", Description: "connects an account"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, ok := req.Params.InputResponses["connect"].(*sdk.ElicitResult)
		if !ok {
			return ask("connect", &sdk.ElicitParams{Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?id=e1", ElicitationID: "e1"}), nil, nil
		}
		if res.Action == "accept" {
			if err := req.Session.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: "e1"}); err != nil {
				return nil, nil, err
			}
		}
		return text("action=" + res.Action), nil, nil
	})
	return srv
}

// ask is a result that asks the client (a multi round-trip request,
// SEP-2322, as MCP 2026-07-28 wants; the SDK asks an older client with
// elicitation/create itself).
func ask(id string, p *sdk.ElicitParams) *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{id: p}}
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// describe renders content sorted, a token as its length.
func describe(content map[string]any) string {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		v := content[k]
		if k == "api_token" {
			v = fmt.Sprintf("len%d", len(fmt.Sprint(v)))
		}
		b, _ := json.Marshal(v)
		parts = append(parts, k+"="+string(b))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// AskHTTP serves NewAskServer over streamable HTTP on 127.0.0.1 and
// returns its URL.
func AskHTTP(t testing.TB) string {
	t.Helper()
	srv := NewAskServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// AskStdio builds the asking server as a program (askserver, speaking
// stdio) into the test's temporary directory and returns its path.
func AskStdio(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "askserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/loom-lsp/loom-lsp/tools/mcp/mcptest/askserver").CombinedOutput()
	if err != nil {
		t.Fatalf("build the asking MCP server: %v\n%s", err, out)
	}
	return bin
}
