package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/oauth2"
)

// TokenStore keeps the OAuth tokens of signed-in MCP servers in one JSON
// file, mode 0600, in loom's state directory (never in a repository).
// Entries are keyed by the server's URL, not its name: a repository's
// configuration naming a server "github" at another URL never receives
// the token signed in for GitHub's. Reads and writes take an advisory
// lock on the file's ".lock" sibling, so processes sharing the file do
// not refresh the same token at once (one refresh, the others read it).
//
// A TokenStore's methods are safe for concurrent use. Tokens are never
// logged: errors name the server, never a token.
type TokenStore struct {
	path string
	mu   sync.Mutex
}

// NewTokenStore returns the store kept in file (created on first save).
func NewTokenStore(file string) *TokenStore { return &TokenStore{path: file} }

// DefaultTokenFile is the token file in loom's state directory dir.
func DefaultTokenFile(stateDir string) string { return filepath.Join(stateDir, "mcp-tokens.json") }

// Path is the store's file.
func (s *TokenStore) Path() string { return s.path }

// storedToken is one server's sign-in: the client loom registered as and
// the token it holds.
type storedToken struct {
	// Name is the server's name when it signed in (shown, not a key).
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url"`
	// AuthStyle is oauth2.AuthStyle of the token endpoint.
	AuthStyle int           `json:"auth_style,omitempty"`
	Token     *oauth2.Token `json:"token"`
	// Resource is the RFC 8707 resource the token was issued for.
	Resource string `json:"resource,omitempty"`
}

func (t *storedToken) config() *oauth2.Config {
	return &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)}}
}

type tokenFile struct {
	Servers map[string]*storedToken `json:"servers"`
}

// locked runs fn with the store's file locked (in this process and
// across processes) and its content read; fn's changes are written back
// when it returns true.
func (s *TokenStore) locked(fn func(f *tokenFile) (write bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	lk, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lk.Close()
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lk.Fd()), syscall.LOCK_UN)
	f := &tokenFile{Servers: map[string]*storedToken{}}
	data, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, f); err != nil {
			return fmt.Errorf("%s is not a token file: %v", s.path, err)
		}
		if f.Servers == nil {
			f.Servers = map[string]*storedToken{}
		}
	}
	write, err := fn(f)
	if err != nil || !write {
		return err
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".mcp-tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// get returns the entry of url, or nil.
func (s *TokenStore) get(url string) (*storedToken, error) {
	var t *storedToken
	err := s.locked(func(f *tokenFile) (bool, error) { t = f.Servers[url]; return false, nil })
	return t, err
}

// put stores the entry of url.
func (s *TokenStore) put(url string, t *storedToken) error {
	return s.locked(func(f *tokenFile) (bool, error) { f.Servers[url] = t; return true, nil })
}

// Has reports whether the server at url has a stored sign-in.
func (s *TokenStore) Has(url string) bool {
	t, err := s.get(url)
	return err == nil && t != nil && t.Token != nil
}

// Forget removes the sign-in of the server at url; it reports whether
// there was one.
func (s *TokenStore) Forget(url string) (bool, error) {
	var had bool
	err := s.locked(func(f *tokenFile) (bool, error) {
		_, had = f.Servers[url]
		delete(f.Servers, url)
		return had, nil
	})
	return had, err
}

// refreshMargin: a token expiring sooner than this is refreshed first.
const refreshMargin = time.Minute

// token returns a valid access token for url: the stored one, or a
// refreshed one (saved) when it expires within refreshMargin or when
// force is set and rejected is the token the server refused. Another
// process may have refreshed it meanwhile: under the lock, a stored token
// other than rejected is taken as it is. It returns nil, nil when there
// is no sign-in or it cannot be refreshed.
func (s *TokenStore) token(ctx context.Context, client *http.Client, url string, force bool, rejected string) (*oauth2.Token, error) {
	var out *oauth2.Token
	err := s.locked(func(f *tokenFile) (bool, error) {
		t := f.Servers[url]
		if t == nil || t.Token == nil {
			return false, nil
		}
		stale := force && t.Token.AccessToken == rejected
		if !stale && t.Token.Expiry.IsZero() || !stale && time.Until(t.Token.Expiry) > refreshMargin {
			out = t.Token
			return false, nil
		}
		if t.Token.RefreshToken == "" || t.TokenURL == "" {
			return false, nil
		}
		old := *t.Token
		old.Expiry = time.Unix(1, 0) // make oauth2 refresh it
		if client != nil {
			ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
		}
		nt, err := t.config().TokenSource(ctx, &old).Token()
		if err != nil {
			// A refused refresh (revoked, expired) means signing in again.
			return false, nil
		}
		t.Token, out = nt, nt
		return true, nil
	})
	return out, err
}
