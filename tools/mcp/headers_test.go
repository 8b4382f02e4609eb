package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A streamable HTTP server behind a bearer token (as a peer's file or
// bearer_token_env gives it): the Spec's headers go with every request.
func TestHTTPServerGetsTheHeaders(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "guarded", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-1" || r.Header.Get("X-Region") != "eu" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m := newManager(t,
		Spec{Name: "good", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer tok-1", "X-Region": "eu"}},
		Spec{Name: "bare", URL: ts.URL})
	waitUntil(t, m, "good ready and bare failed", func() bool {
		st := m.Status()
		return len(st) == 2 && st[0].State == StateFailed && st[1].State == StateReady
	})
	if toolByName(m, "good__ping") == nil {
		t.Errorf("tools = %v", m.Tools())
	}
}
