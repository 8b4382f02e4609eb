package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// browser stands in for the user's browser: it follows the authorization
// URL (the example authorization server signs its demo user in at once
// and redirects) to loom's loopback listener, and keeps the page it got.
type browser struct {
	mu    sync.Mutex
	pages []string
	urls  []string
	done  chan struct{}
}

func newBrowser() *browser { return &browser{done: make(chan struct{}, 8)} }

func (b *browser) open(_ context.Context, u string) error {
	b.mu.Lock()
	b.urls = append(b.urls, u)
	b.mu.Unlock()
	go func() {
		defer func() { b.done <- struct{}{} }()
		resp, err := http.Get(u)
		page := ""
		if err != nil {
			page = "error: " + err.Error()
		} else {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page = string(body)
		}
		b.mu.Lock()
		b.pages = append(b.pages, page)
		b.mu.Unlock()
	}()
	return nil
}

// The official TypeScript SDK's example OAuth-protected server, strict
// about the resource indicator: before signing in it is "needs sign-in"
// saying how; Login (PRM → AS metadata → dynamic registration → PKCE →
// the browser through the loopback redirect → token) stores the token
// 0600; the server then starts and its tool answers; a token the server
// refuses is "needs sign-in" again; the token never reaches the log;
// Logout forgets it.
func TestSignInToTheTypeScriptExampleServer(t *testing.T) {
	srv := mcptest.StartOAuth(t, true)
	file := filepath.Join(t.TempDir(), "state", "mcp-tokens.json")
	store := NewTokenStore(file)
	logs := &syncBuffer{}
	m := NewManager(Options{Tokens: store, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(m.Close)
	spec := Spec{Name: "demo", URL: srv.URL}
	m.Apply([]Spec{spec})
	waitUntil(t, m, "needs sign-in", func() bool {
		st := m.Status()
		return len(st) == 1 && st[0].State == StateNeedsSignIn
	})
	if st := m.Status()[0]; !strings.Contains(st.Error, "loom-lsp mcp login demo") {
		t.Errorf("status error %q does not say how to sign in", st.Error)
	}
	if r := m.TakeReports(); len(r) != 1 || !r[0].SignIn {
		t.Errorf("reports = %+v, want one sign-in report", r)
	}

	b := newBrowser()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Login(ctx, LoginOptions{Spec: spec, Store: store, Open: b.open})
	if err != nil {
		t.Fatalf("Login: %v\nserver output:\n%s", err, srv.Output())
	}
	<-b.done
	if res.Tools == 0 {
		t.Errorf("Login counted %+v, want tools", res)
	}
	if len(b.urls) != 1 || !strings.Contains(b.urls[0], "code_challenge_method=S256") || !strings.Contains(b.urls[0], "resource=") ||
		!strings.Contains(b.urls[0], "redirect_uri=http%3A%2F%2F127.0.0.1%3A") {
		t.Errorf("authorization URLs = %q, want one with PKCE, the resource and a loopback redirect", b.urls)
	}
	if len(b.pages) != 1 || !strings.Contains(b.pages[0], "Signed in to MCP server demo") {
		t.Errorf("the browser's page = %q", b.pages)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode())
	}
	token := storedAccessToken(t, file, srv.URL)

	m.Retry("demo")
	waitUntil(t, m, "demo ready with its greet tool", func() bool { return toolByName(m, "demo__greet") != nil })
	out := run(t, toolByName(m, "demo__greet"), &tools.Env{}, `{"name":"loom"}`)
	if !strings.Contains(out.Text, "Hello, loom") {
		t.Errorf("greet = %q", out.Text)
	}

	// The same authorization server behind a go-sdk resource server
	// (auth.RequireBearerToken, introspecting at the TypeScript example's
	// /introspect): the stored sign-in works there too; once the server
	// refuses it (revoked; the example server itself answers 500 for an
	// unknown token) and there is no refresh token, it is "needs sign-in"
	// again, not a failure.
	goURL := introspectedServer(t, srv.Issuer+"introspect")
	copyStoredSignIn(t, file, srv.URL, goURL, token)
	m.Apply([]Spec{spec, {Name: "gosrv", URL: goURL}})
	waitUntil(t, m, "gosrv ready with the stored token", func() bool { return toolByName(m, "gosrv__ping") != nil })
	copyStoredSignIn(t, file, srv.URL, goURL, "revoked-"+token)
	m.Retry("gosrv")
	waitUntil(t, m, "needs sign-in after the token was refused", func() bool {
		st := m.Status()
		return len(st) == 2 && st[1].State == StateNeedsSignIn
	})
	if st := m.Status()[1]; !strings.Contains(st.Error, "refused the stored sign-in") {
		t.Errorf("status error %q, want the refusal", st.Error)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the access token is in the log:\n%s", logs.String())
	}
	if had, err := Logout(store, spec); !had || err != nil {
		t.Errorf("Logout = %v, %v", had, err)
	}
	if store.Has(srv.URL) {
		t.Error("the sign-in is still stored after Logout")
	}
}

func storedAccessToken(t *testing.T, file, url string) string {
	t.Helper()
	var f tokenFile
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	e := f.Servers[url]
	if e == nil || e.Token == nil || e.Token.AccessToken == "" || e.ClientID == "" || e.TokenURL == "" {
		t.Fatalf("no stored sign-in for %s in %s", url, data)
	}
	return e.Token.AccessToken
}

// copyStoredSignIn stores from's sign-in for to, with access token tok.
func copyStoredSignIn(t *testing.T, file, from, to, tok string) {
	t.Helper()
	store := NewTokenStore(file)
	if err := store.locked(func(f *tokenFile) (bool, error) {
		e := *f.Servers[from]
		tk := *e.Token
		tk.AccessToken, tk.RefreshToken = tok, ""
		e.Token = &tk
		f.Servers[to] = &e
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// introspectedServer is a go-sdk MCP server (tool "ping") behind
// auth.RequireBearerToken, checking tokens at the introspection endpoint.
func introspectedServer(t *testing.T, introspect string) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "introspected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, introspect, strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct {
			Active bool   `json:"active"`
			Exp    int64  `json:"exp"`
			Scope  string `json:"scope"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || !r.Active {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Unix(r.Exp, 0), Scopes: strings.Fields(r.Scope)}, nil
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
	t.Cleanup(ts.Close)
	return ts.URL
}
