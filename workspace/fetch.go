package workspace

import (
	"path/filepath"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/fetch"
)

// The web tools: fetch always (its policy, tools.fetch, decides whether
// a call runs), web_search when the user configured a search service.
// Their network is the commands' (tools.network).

// fetchCaches holds the fetch cache of each state directory: one per
// process, shared by its folders and conversations.
var fetchCaches sync.Map // state dir -> *fetch.Cache

// fetchCache is the host's page cache: in loom's state directory, which
// commands can neither read nor write (the sandbox hides it, the write
// tools refuse it), so that no agent can plant a page another folder's
// conversation later reads as fetched. Nil when there is no state
// directory.
func (h *Host) fetchCache() *fetch.Cache {
	dir, err := h.stateDir()
	if err != nil {
		return nil
	}
	c, _ := fetchCaches.LoadOrStore(dir, fetch.NewCache(filepath.Join(dir, "fetch-cache"), 0))
	return c.(*fetch.Cache)
}

// ClearFetchCache removes every page the fetch tool kept; it reports how
// many.
func (h *Host) ClearFetchCache() (int, error) {
	c := h.fetchCache()
	if c == nil {
		return 0, nil
	}
	return c.Clear()
}

// fetchSettings is what cfg lets the fetch tool do.
func (h *Host) fetchSettings(cfg config.Config) *fetch.Settings {
	t := cfg.Tools
	s := &fetch.Settings{
		Network:   t.Network.Mode,
		Allow:     t.Network.Allow,
		Deny:      t.FetchDeny,
		Private:   t.FetchPrivate,
		Timeout:   t.FetchTimeout.Duration,
		MaxBytes:  t.FetchMaxBytes,
		Cache:     h.fetchCache(),
		UserAgent: "loom-lsp (+https://github.com/loom-lsp/loom-lsp)",
	}
	switch t.Network.Mode {
	case config.NetworkOff:
		s.Network = fetch.NetworkOff
	case config.NetworkAllow:
		s.Network = fetch.NetworkAllow
	default:
		s.Network = fetch.NetworkOn
	}
	return s
}

// webTools are the fetch tool and, with a search service configured,
// web_search.
func (h *Host) webTools(cfg config.Config) []tools.Tool {
	fs := h.fetchSettings(cfg)
	out := []tools.Tool{fetch.Tool{Settings: fs}}
	if sc := cfg.Search; sc.Provider != "" {
		key := ""
		if sc.APIKeyEnv != "" {
			secret.Take(sc.APIKeyEnv) // out of the environment commands inherit
			key = h.opts.Getenv(sc.APIKeyEnv)
			h.redactor.Add(key)
		}
		out = append(out, fetch.SearchTool{Settings: &fetch.SearchSettings{
			Provider: sc.Provider, URL: sc.URL, Key: key, MaxResults: sc.MaxResults, Fetch: fs,
		}})
	}
	return out
}
