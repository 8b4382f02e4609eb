package mcp

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// LoginOptions says how to sign in to one server.
type LoginOptions struct {
	// Spec is the server (an HTTP one: Spec.URL).
	Spec Spec
	// Store receives the token.
	Store *TokenStore
	// Open shows the authorization URL to the user (LSP
	// window/showDocument, or printed). It must not block on the user:
	// Login waits for the browser to come back to its loopback listener.
	Open func(ctx context.Context, authURL string) error
	// HTTPClient fetches the metadata, registers the client and exchanges
	// the code; nil uses http.DefaultClient.
	HTTPClient *http.Client
	// Version is the client version sent in initialize.
	Version string
}

// LoginResult is what the server offers once signed in.
type LoginResult struct {
	Tools, Prompts, Resources int
}

// Login signs in to an HTTP server with the OAuth authorization code
// flow of the MCP specification, as the go-sdk's auth package runs it:
// Protected Resource Metadata (RFC 9728) → authorization server metadata
// (RFC 8414, issuer checked), the client pre-registered (Spec.ClientID)
// or dynamically registered (RFC 7591), PKCE (S256), the resource
// indicator (RFC 8707), the response's iss (RFC 9207). The redirect goes
// to a listener on 127.0.0.1 held only for the flow. The token is saved
// in Store, then the server is connected to once to count what it
// offers.
func Login(ctx context.Context, o LoginOptions) (LoginResult, error) {
	var res LoginResult
	if o.Spec.URL == "" {
		return res, fmt.Errorf("MCP server %q is not an HTTP server: only those sign in", o.Spec.Name)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("the sign-in's loopback listener: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	results := make(chan callbackResult, 1)
	srv := &http.Server{Handler: callbackHandler(o.Spec.Name, results), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "loom-lsp", RedirectURIs: []string{redirect},
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:           redirect,
		RequestRefreshToken:   true,
		AcceptUnadvertisedIss: true,
		Client:                client,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := o.Open(ctx, args.URL); err != nil {
				return nil, err
			}
			select {
			case r := <-results:
				if r.err != "" {
					return nil, fmt.Errorf("the authorization server refused: %s", r.err)
				}
				return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("no answer from the browser: %w", ctx.Err())
			}
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			err := o.Store.put(o.Spec.URL, &storedToken{Name: o.Spec.Name, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Token: tok, Resource: o.Spec.URL})
			if err != nil {
				return nil, fmt.Errorf("saving the token: %w", err)
			}
			return c.TokenSource(ctx, tok), nil
		},
	}
	if o.Spec.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.Spec.ClientMetadataURL}
	}
	if o.Spec.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.Spec.ClientID}
	}
	if len(o.Spec.Scopes) > 0 {
		scopes := o.Spec.Scopes
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return res, err
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "loom-lsp", Version: o.Version}, nil)
	hc := (&server{spec: o.Spec}).httpClient()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: o.Spec.URL, HTTPClient: hc, OAuthHandler: h, MaxRetries: 1}, nil)
	if err != nil {
		return res, fmt.Errorf("signing in to MCP server %q: %w", o.Spec.Name, err)
	}
	defer cs.Close()
	return countOffers(ctx, cs)
}

// countOffers counts a session's tools, prompts and resources.
func countOffers(ctx context.Context, cs *sdk.ClientSession) (LoginResult, error) {
	var res LoginResult
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Tools != nil {
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return res, err
			}
			res.Tools++
		}
	}
	o, err := listOthers(ctx, cs)
	res.Prompts, res.Resources = len(o.prompts), len(o.resources)+len(o.templates)
	return res, err
}

// Logout forgets the sign-in of spec's server; it reports whether there
// was one.
func Logout(store *TokenStore, spec Spec) (bool, error) {
	if spec.URL == "" {
		return false, errors.New("not an HTTP server")
	}
	return store.Forget(spec.URL)
}

// callbackResult is what the browser brought back to the loopback
// listener.
type callbackResult struct {
	code, state, iss, err string
}

// callbackHandler answers the authorization server's redirect once.
func callbackHandler(name string, results chan<- callbackResult) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		res := callbackResult{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		if e := q.Get("error"); e != "" {
			res.err = e
			if d := q.Get("error_description"); d != "" {
				res.err += ": " + d
			}
		} else if res.code == "" {
			res.err = "no authorization code in the redirect"
		}
		select {
		case results <- res:
		default: // a second redirect: the first one counts
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		msg := "Signed in to MCP server " + name + ". You may close this tab."
		if res.err != "" {
			msg = "Signing in to MCP server " + name + " failed: " + res.err
		}
		fmt.Fprintf(w, "<!doctype html><title>loom-lsp</title><p>%s</p>\n", html.EscapeString(msg))
	})
	return mux
}
