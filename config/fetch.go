package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The fetch keys of [Tools] and the [search] table:
//
//	[tools]
//	fetch = "ask"                      # allow | ask | deny
//	fetch_timeout = "30s"
//	fetch_max_bytes = 100000
//	fetch_private = ["localhost:6060"] # hosts allowed on private addresses
//	fetch_deny = ["example.com"]
//
//	[search]
//	provider = "searxng"               # or "brave", "tavily"
//	url = "https://searx.example.org"  # searxng: your instance
//	api_key_env = "BRAVE_API_KEY"      # brave, tavily

// Search providers, the values of [Search.Provider].
const (
	SearchSearXNG = "searxng"
	SearchBrave   = "brave"
	SearchTavily  = "tavily"
)

// Search is a web search endpoint the user runs or pays for. With no
// provider the web_search tool is not offered.
type Search struct {
	// Provider is "" (no search), "searxng", "brave" or "tavily".
	Provider string `toml:"provider"`
	// URL is the endpoint: a SearXNG instance's base URL; for brave and
	// tavily, "" means their public API.
	URL string `toml:"url"`
	// APIKeyEnv names the environment variable holding the provider's
	// API key (brave, tavily); the key itself is never in a file.
	APIKeyEnv string `toml:"api_key_env"`
	// MaxResults caps the results returned to the model; 1..20, default 8.
	MaxResults int `toml:"max_results"`
}

// fetchKeyWidens reports whether a workspace layer setting a fetch or
// search key to val gives the agent more than the user did.
func fetchKeyWidens(key string, val any) bool {
	switch key {
	case "tools.fetch":
		s, _ := val.(string)
		return s == string(PolicyAllow)
	case "tools.fetch_private", "tools.fetch_max_bytes", "tools.fetch_timeout":
		return true
	}
	return key == "search" || strings.HasPrefix(key, "search.")
}

// validateFetch checks the fetch keys and the search table.
func (c Config) validateFetch(add func(*Error)) {
	t := c.Tools
	switch t.Fetch {
	case PolicyAllow, PolicyAsk, PolicyDeny:
	default:
		add(c.keyErr("tools.fetch", "invalid policy %q: want %q, %q or %q", t.Fetch, PolicyAllow, PolicyAsk, PolicyDeny))
	}
	if t.FetchTimeout.Duration <= 0 {
		add(c.keyErr("tools.fetch_timeout", "must be > 0, got %v", t.FetchTimeout))
	}
	if t.FetchMaxBytes <= 0 {
		add(c.keyErr("tools.fetch_max_bytes", "must be > 0, got %d", t.FetchMaxBytes))
	}
	for _, list := range []struct {
		key   string
		hosts []string
	}{{"tools.fetch_private", t.FetchPrivate}, {"tools.fetch_deny", t.FetchDeny}} {
		for _, h := range list.hosts {
			if err := checkHostName(h); err != nil {
				add(c.keyErr(list.key, "%v", err))
			}
		}
	}
	c.validateSearch(add)
}

// validateSearch checks the [search] table: a provider with what it
// needs (an instance's URL, a key's variable), the URL, the results.
func (c Config) validateSearch(add func(*Error)) {
	s := c.Search
	switch s.Provider {
	case "":
	case SearchSearXNG:
		if s.URL == "" {
			add(c.keyErr("search.url", `provider "searxng" needs the URL of your instance`))
		}
	case SearchBrave, SearchTavily:
		if s.APIKeyEnv == "" {
			add(c.keyErr("search.api_key_env", "provider %q needs api_key_env, the environment variable holding its key", s.Provider))
		}
	default:
		add(c.keyErr("search.provider", "unknown provider %q: want %q, %q or %q", s.Provider, SearchSearXNG, SearchBrave, SearchTavily))
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(c.keyErr("search.url", "%q is not an http or https URL", s.URL))
		}
	}
	if s.MaxResults < 0 || s.MaxResults > 20 {
		add(c.keyErr("search.max_results", "must be in 0..20 (0: 8), got %d", s.MaxResults))
	}
}

// checkHostName accepts "host" or "host:port".
func checkHostName(s string) error {
	h := s
	if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") && strings.Count(s, ":") == 1 || strings.HasPrefix(s, "[") {
		if err := checkHostPort(s); err != nil {
			return err
		}
		h, _, _ = net.SplitHostPort(s)
	}
	if h == "" || strings.ContainsAny(h, "/ @?#") {
		return fmt.Errorf("%q is not a host name (e.g. \"docs.internal\" or \"localhost:6060\")", s)
	}
	return nil
}
