package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
)

// cimdServers is an MCP server (go-sdk, behind auth.RequireBearerToken,
// with its Protected Resource Metadata) whose authorization server
// supports Client ID Metadata Documents: it fetches the client id URL
// (over https, from a TLS server holding loom's document), accepts a
// redirect the document lists (any loopback port), and issues a token to
// that client id; its registration endpoint counts the calls it gets.
type cimdServers struct {
	mcpURL, docURL string
	mu             sync.Mutex
	clientIDs      []string // the client ids the authorize endpoint saw
	registered     int
	problems       []string
}

func (c *cimdServers) problem(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func startCIMD(t *testing.T) *cimdServers {
	t.Helper()
	c := &cimdServers{}
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/loom/client.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": c.docURL, "client_name": "loom-lsp",
			"redirect_uris": []string{"http://127.0.0.1/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	}))
	t.Cleanup(docs.Close)
	c.docURL = docs.URL + "/loom/client.json"

	as := http.NewServeMux()
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	issuer := asSrv.URL
	as.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize",
			"token_endpoint": issuer + "/token", "registration_endpoint": issuer + "/register",
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"client_id_metadata_document_supported": true, "authorization_response_iss_parameter_supported": true})
	})
	as.HandleFunc("/register", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		c.registered++
		c.mu.Unlock()
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
	})
	as.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		id := q.Get("client_id")
		c.mu.Lock()
		c.clientIDs = append(c.clientIDs, id)
		c.mu.Unlock()
		// The client id is a URL: fetch the document, check the redirect.
		resp, err := docs.Client().Get(id)
		if err != nil {
			c.problem("fetching %s: %v", id, err)
			http.Error(w, "bad client", http.StatusBadRequest)
			return
		}
		defer resp.Body.Close()
		var doc struct {
			ClientID     string   `json:"client_id"`
			RedirectURIs []string `json:"redirect_uris"`
		}
		redirect, _ := url.Parse(q.Get("redirect_uri"))
		if json.NewDecoder(resp.Body).Decode(&doc) != nil || doc.ClientID != id || redirect == nil || redirect.Hostname() != "127.0.0.1" ||
			!slices.Contains(doc.RedirectURIs, "http://127.0.0.1"+redirect.Path) || q.Get("code_challenge_method") != "S256" {
			c.problem("authorize: doc %+v, query %v", doc, q)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		v := url.Values{"code": {"code-1"}, "state": {q.Get("state")}, "iss": {issuer}}
		http.Redirect(w, r, redirect.String()+"?"+v.Encode(), http.StatusFound)
	})
	as.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("client_id")
		if u, _, ok := r.BasicAuth(); ok {
			id, _ = url.QueryUnescape(u) // oauth2's client_secret_basic, an empty secret
		}
		if r.ParseForm() != nil || id != c.docURL || r.Form.Get("code") != "code-1" || r.Form.Get("code_verifier") == "" {
			c.problem("token: %v", r.Form)
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-cimd", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "ref-cimd"})
	})

	srv := sdk.NewServer(&sdk.Implementation{Name: "cimd", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers pong"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if tok != "tok-cimd" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	c.mcpURL = rs.URL + "/mcp"
	prm := rs.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": c.mcpURL, "authorization_servers": []string{issuer}})
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(h))
	return c
}

// Client ID Metadata Document registration (SEP-991), as go-sdk's auth
// runs it: with oauth_client_metadata_url set, an authorization server
// that supports such documents gets the document's URL as loom's client
// id (it fetches the document over https and checks the loopback
// redirect), no dynamic registration is made, the token is stored, and
// the server's tool answers with it. Without the URL, loom registers
// dynamically (which this server refuses).
func TestSignInWithClientIDMetadataDocument(t *testing.T) {
	c := startCIMD(t)
	file := filepath.Join(t.TempDir(), "state", "mcp-tokens.json")
	store := NewTokenStore(file)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	b := newBrowser()
	if _, err := Login(ctx, LoginOptions{Spec: Spec{Name: "cimd", URL: c.mcpURL}, Store: store, Open: b.open}); err == nil {
		t.Fatal("signed in without a client metadata document, by a registration the server refuses")
	}
	c.mu.Lock()
	if c.registered == 0 {
		t.Errorf("no registration without the document")
	}
	c.registered = 0
	c.mu.Unlock()

	spec := Spec{Name: "cimd", URL: c.mcpURL, ClientMetadataURL: c.docURL}
	b = newBrowser()
	res, err := Login(ctx, LoginOptions{Spec: spec, Store: store, Open: b.open})
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("Login: %v (server problems: %q)", err, c.problems)
	}
	<-b.done
	c.mu.Lock()
	if c.registered != 0 || !slices.Equal(c.clientIDs, []string{c.docURL}) || len(c.problems) > 0 || res.Tools != 1 {
		t.Errorf("registered %d, client ids %q, problems %q, offers %+v; want the document's URL as the client id, no registration", c.registered, c.clientIDs, c.problems, res)
	}
	c.mu.Unlock()
	if tok := storedAccessToken(t, file, c.mcpURL); tok != "tok-cimd" {
		t.Errorf("stored token %q", tok)
	}

	m := NewManager(Options{Tokens: store})
	t.Cleanup(m.Close)
	m.Apply([]Spec{spec})
	waitUntil(t, m, "cimd ready with the stored sign-in", func() bool { return toolByName(m, "cimd__ping") != nil })
	if out := run(t, toolByName(m, "cimd__ping"), &tools.Env{}, `{}`); !strings.Contains(out.Text, "pong") {
		t.Errorf("ping = %q", out.Text)
	}
}
