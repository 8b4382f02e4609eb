package fetch

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/tools"
)

//go:embed search.md
var searchDescription string

// SearchName is the web search tool's name.
const SearchName = "web_search"

// Search providers.
const (
	SearXNG = "searxng"
	Brave   = "brave"
	Tavily  = "tavily"
)

// Public endpoints of the paid providers, used when SearchSettings.URL
// is "".
const (
	BraveURL  = "https://api.search.brave.com/res/v1/web/search"
	TavilyURL = "https://api.tavily.com/search"
)

// SearchSettings is the user's search service.
type SearchSettings struct {
	// Provider is SearXNG, Brave or Tavily.
	Provider string
	// URL is the endpoint: a SearXNG instance's base URL; "" for Brave's
	// and Tavily's public APIs.
	URL string
	// Key is the provider's API key (Brave, Tavily), from the
	// environment variable the user named; it is sent to the provider
	// only, in its own header.
	Key string
	// MaxResults caps the results; zero means 8.
	MaxResults int
	// Fetch is the fetch settings the request runs under (network
	// policy, timeout); the search host itself counts as named by the
	// user, who configured it.
	Fetch *Settings
}

// SearchTool is the web_search tool.
type SearchTool struct {
	Settings *SearchSettings
}

// Hit is one search result.
type Hit struct {
	Title, URL, Snippet string
}

// Name implements tools.Tool.
func (SearchTool) Name() string { return SearchName }

// Description implements tools.Tool.
func (SearchTool) Description() string { return searchDescription }

// Mutating implements tools.Tool.
func (SearchTool) Mutating() bool { return false }

// Schema implements tools.Tool.
func (SearchTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"what to search for"}},` +
		`"required":["query"],"additionalProperties":false}`)
}

// Run implements tools.Tool.
func (t SearchTool) Run(ctx context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	var p struct {
		Query string `json:"query"`
	}
	dec := json.NewDecoder(bytes.NewReader(orEmpty(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || strings.TrimSpace(p.Query) == "" {
		return failed(`web_search: invalid arguments: want {"query": "…"}`), nil
	}
	hits, err := Search(ctx, t.Settings, p.Query)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return failed("web_search: %v", err), nil
	}
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(h.Title), h.URL)
		if s := oneLine(h.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	if len(hits) == 0 {
		b.WriteString("(no results)\n")
	}
	text := fmt.Sprintf("Search: %s (%s), %d results\n\n", p.Query, t.Settings.Provider, len(hits)) +
		Wrap(t.Settings.Provider+" search results", strings.TrimRight(b.String(), "\n"))
	return tools.Result{Text: text, Summary: fmt.Sprintf("%q: %d results", p.Query, len(hits))}, nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return json.RawMessage("{}")
	}
	return b
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = cutText(s, 300) + "…"
	}
	return s
}

// Search queries the user's search service.
func Search(ctx context.Context, s *SearchSettings, query string) ([]Hit, error) {
	if s == nil || s.Provider == "" {
		return nil, errors.New("no search service is configured ([search] in loom.toml)")
	}
	fs := Settings{}
	if s.Fetch != nil {
		fs = *s.Fetch
	}
	req, err := searchRequest(s, query)
	if err != nil {
		return nil, err
	}
	// The user configured this host: it may be a SearXNG on this machine.
	fs.Private = append(append([]string(nil), fs.Private...), req.URL.Hostname())
	ctx, cancel := context.WithTimeout(ctx, fs.timeout())
	defer cancel()
	g := newGuard(&fs)
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil, DialContext: g.dial, DisableKeepAlives: true, TLSHandshakeTimeout: 10 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w: no answer from %s within %s", ErrTimeout, req.URL.Host, fs.timeout())
		}
		var blocked *BlockedError
		if errors.As(err, &blocked) {
			return nil, blocked
		}
		return nil, fmt.Errorf("%s: %v", req.URL.Host, shortErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s's answer: %v", s.Provider, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s: %s", s.Provider, resp.Status, oneLine(string(body)))
	}
	hits, err := parseHits(s.Provider, body)
	if err != nil {
		return nil, fmt.Errorf("%s's answer: %v", s.Provider, err)
	}
	if max := s.maxResults(); len(hits) > max {
		hits = hits[:max]
	}
	return hits, nil
}

func (s *SearchSettings) maxResults() int {
	if s.MaxResults <= 0 {
		return 8
	}
	return s.MaxResults
}

// searchRequest is the provider's request for query.
func searchRequest(s *SearchSettings, query string) (*http.Request, error) {
	switch s.Provider {
	case SearXNG:
		u, err := url.Parse(strings.TrimRight(s.URL, "/") + "/search")
		if err != nil || s.URL == "" {
			return nil, fmt.Errorf("search.url %q is not a URL", s.URL)
		}
		u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
		return http.NewRequest(http.MethodGet, u.String(), nil)
	case Brave:
		u, err := url.Parse(or(s.URL, BraveURL))
		if err != nil {
			return nil, err
		}
		u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(s.maxResults())}}.Encode()
		req, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err == nil {
			req.Header.Set("Accept", "application/json")
			req.Header.Set("X-Subscription-Token", s.Key)
		}
		return req, err
	case Tavily:
		body, _ := json.Marshal(map[string]any{"query": query, "max_results": s.maxResults()})
		req, err := http.NewRequest(http.MethodPost, or(s.URL, TavilyURL), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+s.Key)
		}
		return req, err
	}
	return nil, fmt.Errorf("unknown search provider %q", s.Provider)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseHits reads a provider's JSON answer.
func parseHits(provider string, body []byte) ([]Hit, error) {
	type result struct {
		Title       string `json:"title"`
		URL         string `json:"url"`
		Content     string `json:"content"`
		Description string `json:"description"`
	}
	var answer struct {
		Results []result `json:"results"` // searxng, tavily
		Web     struct {
			Results []result `json:"results"`
		} `json:"web"` // brave
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, err
	}
	rs := answer.Results
	if provider == Brave {
		rs = answer.Web.Results
	}
	hits := make([]Hit, 0, len(rs))
	for _, r := range rs {
		if r.URL == "" {
			continue
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: or(r.Content, r.Description)})
	}
	return hits, nil
}
