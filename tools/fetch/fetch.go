package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Page is what one fetch got.
type Page struct {
	// URL is the URL asked for; FinalURL the one whose answer this is,
	// after same-host redirects (and an upgrade to https).
	URL, FinalURL string
	// Status is the HTTP status code; StatusText its words ("200 OK").
	Status     int
	StatusText string
	// ContentType is the media type the server named (or sniffed).
	ContentType string
	// Text is the readable text, at most Settings.MaxBytes bytes.
	Text string
	// Cut reports that Text (or the download) was cut; FullLen is the
	// text's length before the cut.
	Cut     bool
	FullLen int
	// Bytes is the size of the body as downloaded.
	Bytes int64
	// Redirect is a redirect to another host, not followed: the URL it
	// points at. Text is then empty.
	Redirect string
	// Revalidated reports that the body came from the cache after the
	// server answered 304 Not Modified.
	Revalidated bool
	// Note says something the model should know of how the page was
	// fetched ("https failed: …; fetched over http").
	Note string
}

// ErrTimeout is wrapped by a fetch that ran out of time.
var ErrTimeout = errors.New("timed out")

// Fetch gets rawURL's readable text under s. A refusal (policy, address,
// binary type) and a failure to connect are errors the caller hands the
// model; an HTTP error status is a Page with that status.
func Fetch(ctx context.Context, s *Settings, rawURL string) (*Page, error) {
	u, err := checkURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	f := &fetcher{s: s, g: newGuard(s)}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // never the environment's proxy: the guard must see the real address
			DialContext:            f.g.dial,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 1 << 20,
			DisableKeepAlives:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer f.client.CloseIdleConnections()
	page, err := f.upgraded(ctx, u)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%w: no complete answer from %s within %s (tools.fetch_timeout)", ErrTimeout, u.Host, s.timeout())
	}
	if page != nil {
		page.URL = rawURL
	}
	return page, err
}

// checkURL accepts http and https URLs with a host and no credentials.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: fetch reads http and https URLs only", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q carries credentials; fetch sends none", redactUser(u))
	}
	u.Fragment = ""
	return u, nil
}

func redactUser(u *url.URL) string {
	c := *u
	c.User = url.User("…")
	return c.String()
}

type fetcher struct {
	s      *Settings
	g      *guard
	client *http.Client
}

// upgraded fetches an http URL of a host the user did not name over
// https first, and over http when https cannot connect.
func (f *fetcher) upgraded(ctx context.Context, u *url.URL) (*Page, error) {
	if u.Scheme != "http" || f.s.namedPrivate(u.Hostname(), portOf(u)) {
		return f.follow(ctx, u)
	}
	secure := *u
	secure.Scheme = "https"
	if secure.Port() == "80" {
		secure.Host = secure.Hostname()
	}
	page, err := f.follow(ctx, &secure)
	var blocked *BlockedError
	if err == nil || errors.As(err, &blocked) || ctx.Err() != nil {
		return page, err
	}
	page, err2 := f.follow(ctx, u)
	if err2 != nil {
		return nil, err2
	}
	page.Note = "https failed (" + shortErr(err) + "); fetched over http"
	return page, nil
}

// follow gets u, following same-host redirects.
func (f *fetcher) follow(ctx context.Context, u *url.URL) (*Page, error) {
	for hop := 0; ; hop++ {
		resp, entry, err := f.get(ctx, u)
		if err != nil {
			return nil, err
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			resp.Body.Close()
			next, err := u.Parse(loc)
			if err != nil {
				return nil, fmt.Errorf("%s redirected to a bad URL %q", u, loc)
			}
			next.Fragment = ""
			if !sameHost(u, next) || (next.Scheme != "http" && next.Scheme != "https") {
				return &Page{FinalURL: u.String(), Status: resp.StatusCode, StatusText: resp.Status, Redirect: next.String()}, nil
			}
			if hop >= MaxRedirects {
				return nil, fmt.Errorf("%s: more than %d redirects", u, MaxRedirects)
			}
			u = next
			continue
		}
		return f.read(u, resp, entry)
	}
}

// get sends one GET, conditional when the cache holds u.
func (f *fetcher) get(ctx context.Context, u *url.URL) (*http.Response, *cached, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	ua := f.s.UserAgent
	if ua == "" {
		ua = "loom-lsp"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/pdf;q=0.7, */*;q=0.1")
	var entry *cached
	if f.s.Cache != nil {
		entry = f.s.Cache.get(u.String())
		entry.conditional(req)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		var blocked *BlockedError
		if errors.As(err, &blocked) {
			return nil, nil, blocked
		}
		return nil, nil, err
	}
	return resp, entry, nil
}

// read takes the answer's body and makes it text.
func (f *fetcher) read(u *url.URL, resp *http.Response, entry *cached) (*Page, error) {
	defer resp.Body.Close()
	p := &Page{FinalURL: u.String(), Status: resp.StatusCode, StatusText: resp.Status}
	var body []byte
	header := resp.Header
	if resp.StatusCode == http.StatusNotModified && entry != nil {
		b, err := entry.body()
		if err != nil {
			return nil, fmt.Errorf("the cache lost %s: %v", u, err)
		}
		body, header, p.Revalidated = b, entry.header(), true
		p.Status, p.StatusText = http.StatusOK, "200 OK"
	} else {
		max := f.s.maxDownload()
		b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %v", u, err)
		}
		if int64(len(b)) > max {
			b, p.Cut = b[:max], true
		}
		body = b
		if resp.StatusCode == http.StatusOK && !p.Cut && f.s.Cache != nil {
			f.s.Cache.put(u.String(), resp.Header, body)
		}
	}
	p.Bytes = int64(len(body))
	mediaType, params := mediaTypeOf(header.Get("Content-Type"), body)
	p.ContentType = mediaType
	text, err := toText(mediaType, params, body, p.Cut)
	if err != nil {
		return nil, err
	}
	p.FullLen = len(text)
	if max := f.s.maxBytes(); len(text) > max {
		text, p.Cut = cutText(text, max), true
	}
	p.Text = text
	return p, nil
}

func mediaTypeOf(contentType string, body []byte) (string, map[string]string) {
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0])), nil
	}
	return mt, params
}

func sameHost(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	if a.Scheme == b.Scheme {
		return portOf(a) == portOf(b)
	}
	// http -> https on the same host, default ports: an upgrade.
	return a.Scheme == "http" && b.Scheme == "https" && portOf(a) == "80" && portOf(b) == "443"
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func shortErr(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err.Error()
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
