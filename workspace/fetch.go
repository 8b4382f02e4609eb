package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
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
	c, _ := fetchCaches.LoadOrStore(dir, fetch.NewCache(FetchCacheDir(dir), 0))
	return c.(*fetch.Cache)
}

// FetchCacheDir is where the fetch cache lives in stateDir.
func FetchCacheDir(stateDir string) string { return filepath.Join(stateDir, "fetch-cache") }

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

// askFetch asks the user whether the fetch c (of host) may run; the
// answer is an event of the machine. "Always allow" saves host for the
// folder.
func (r callRun) askFetch(ctx context.Context, turn uint64, c fsm.ToolCall, host string, timeout time.Duration) (refusal string, settled, approved bool) {
	s := r.s
	var args fetch.Params
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	decide := func(ok bool, why string) (string, bool, bool) {
		if !r.stepTaken(ctx, fsm.ApprovalDecided{Turn: turn, CallID: c.ID, Approved: ok, Why: why}) || !ok {
			return "", true, false
		}
		return "", false, true
	}
	a := Approval{Folder: s.folder.dir, Turn: turn, Tool: c.Name, CallID: c.ID, Detail: args.URL}
	if host != "" {
		a.Host = host
		a.Always = func() {
			if err := s.folder.host.Rules().AddFetchHost(s.folder.dir, host); err != nil {
				r.notifyFromWorker(Notification{Kind: NoteError, Turn: turn, Text: "Loom fetched the page once, but did not save the rule: " + err.Error()})
				return
			}
			r.notifyFromWorker(Notification{Kind: NoteInfo, Turn: turn, Text: "Loom now fetches from " + host + " without asking in this folder."})
		}
	}
	ok, err := s.out.approve(ctx, a, timeout)
	switch {
	case errors.Is(err, ErrUnsupported):
		why := `web fetches need the user's approval (tools.fetch = "ask") and no one can approve here; ` +
			`set tools.fetch = "allow" in your loom.toml, or allow the host once in an editor`
		r.notifyFromWorker(Notification{Kind: NoteError, Turn: turn, Text: "Loom did not fetch " + args.URL + ": " + why + "."})
		return decide(false, why)
	case errors.Is(err, errApprovalTimeout):
		why := fmt.Sprintf("no answer within %s (tools.approval_timeout)", timeout)
		r.notifyFromWorker(Notification{Kind: NoteError, Turn: turn, Text: "Loom did not fetch " + args.URL + ": " + why + "."})
		return decide(false, why)
	case err != nil:
		if ctx.Err() != nil {
			return "", true, false
		}
		return "tool error: could not ask the user to approve the fetch: " + err.Error(), false, false
	}
	return decide(ok, "")
}
