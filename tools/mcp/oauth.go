package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrNeedsSignIn is the error of a server that answered 401 (or 403
// insufficient_scope) with no stored sign-in that works: the user must
// sign in (Login) before it can start.
var ErrNeedsSignIn = errors.New("needs sign-in")

// SignInHow says how to sign in to server name, for messages and status.
func SignInHow(name string) string {
	return fmt.Sprintf("sign in with `loom-lsp mcp login %s` or the editor's command \"Loom: Sign in to MCP server\" (loom.mcpLogin)", name)
}

// tokenHandler is the auth.OAuthHandler of a running (non-interactive)
// server: it sends the stored token, refreshes it before it expires and
// once after a 401, and otherwise reports ErrNeedsSignIn — it never
// starts a browser flow by itself (Login does, when the user asks).
type tokenHandler struct {
	store  *TokenStore
	url    string
	client *http.Client

	mu     sync.Mutex
	cur    *oauth2.Token
	needed bool // set once the server refused and no refresh helped
}

var _ auth.OAuthHandler = (*tokenHandler)(nil)

// TokenSource gives the transport the stored token (nil when there is
// none: the request goes without, and the 401 reaches Authorize).
func (h *tokenHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != nil && (h.cur.Expiry.IsZero() || time.Until(h.cur.Expiry) > refreshMargin) {
		return oauth2.StaticTokenSource(h.cur), nil
	}
	tok, err := h.store.token(ctx, h.client, h.url, false, "")
	if err != nil || tok == nil {
		return nil, err
	}
	h.cur = tok
	return oauth2.StaticTokenSource(tok), nil
}

// Authorize is called after a 401 or 403: one refresh of a refused
// token, else ErrNeedsSignIn.
func (h *tokenHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	reason := ""
	for _, c := range challenges {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			reason = c.Params["error"]
		}
	}
	if resp.StatusCode == http.StatusForbidden && reason != "insufficient_scope" {
		return nil // not an authorization matter: the retry reports it
	}
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	h.mu.Lock()
	defer h.mu.Unlock()
	if sent != "" && reason != "insufficient_scope" {
		if tok, err := h.store.token(ctx, h.client, h.url, true, sent); err == nil && tok != nil && tok.AccessToken != sent {
			h.cur = tok
			return nil // retried once with the new token
		}
	}
	h.cur, h.needed = nil, true
	switch {
	case sent == "":
		return fmt.Errorf("%w: the server requires authorization (HTTP %d)", ErrNeedsSignIn, resp.StatusCode)
	case reason == "insufficient_scope":
		return fmt.Errorf("%w: the server wants more scopes than the sign-in gave (HTTP 403 insufficient_scope)", ErrNeedsSignIn)
	default:
		return fmt.Errorf("%w: the server refused the stored sign-in (HTTP %d %s)", ErrNeedsSignIn, resp.StatusCode, reason)
	}
}

// signInNeeded reports whether the server refused with no way in.
func (h *tokenHandler) signInNeeded() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needed
}

// usesOAuth reports whether a server signs in through the store: an HTTP
// server whose headers do not carry their own Authorization.
func (s Spec) usesOAuth(store *TokenStore) bool {
	if s.URL == "" || store == nil {
		return false
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}
