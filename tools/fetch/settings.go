package fetch

import (
	"net"
	"strings"
	"time"
)

// Defaults used when the matching Settings field is zero.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxBytes    = 100_000
	DefaultMaxDownload = 10 << 20
	// MaxRedirects is the number of same-host redirects followed.
	MaxRedirects = 5
)

// Settings is what the user allowed fetch to do. The zero value reaches
// any public host with the defaults.
type Settings struct {
	// Network is the commands' network mode: NetworkOn (or ""),
	// NetworkOff, or NetworkAllow with Allow.
	Network string
	// Allow lists the "host:port" entries of NetworkAllow. A host named
	// there may also resolve to a private address: the user named it.
	Allow []string
	// Deny lists hosts fetch never reaches, with their subdomains.
	Deny []string
	// Private lists hosts ("host" or "host:port") the user named as
	// reachable although they resolve to a loopback or private address
	// (a docs server on this machine, an intranet wiki).
	Private []string
	// Timeout bounds a whole fetch, redirects included; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxBytes caps the text returned; zero means DefaultMaxBytes.
	MaxBytes int
	// MaxDownload caps the bytes read from the server; zero means
	// DefaultMaxDownload.
	MaxDownload int64
	// Cache, when not nil, keeps pages for revalidation.
	Cache *Cache
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// UserAgent is sent as the User-Agent header.
	UserAgent string
}

func (s *Settings) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

func (s *Settings) maxBytes() int {
	if s.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return s.MaxBytes
}

func (s *Settings) maxDownload() int64 {
	if s.MaxDownload <= 0 {
		return DefaultMaxDownload
	}
	return s.MaxDownload
}

// hostRefused says why the policy refuses host:port, or "".
func (s *Settings) hostRefused(host, port string) string {
	host = normHost(host)
	switch s.Network {
	case NetworkOff:
		return ErrNetworkOff.Error()
	case NetworkAllow:
		if !s.inAllow(host, port) {
			return "not in the network allow-list (tools.network = [" + strings.Join(s.Allow, ", ") + "])"
		}
	}
	for _, d := range s.Deny {
		d = normHost(d)
		if host == d || strings.HasSuffix(host, "."+d) {
			return "denied by tools.fetch_deny (" + d + ")"
		}
	}
	return ""
}

func (s *Settings) inAllow(host, port string) bool {
	for _, a := range s.Allow {
		h, p, err := net.SplitHostPort(a)
		if err == nil && normHost(h) == host && p == port {
			return true
		}
	}
	return false
}

// namedPrivate reports whether the user named host:port, so that it may
// resolve to a private address.
func (s *Settings) namedPrivate(host, port string) bool {
	host = normHost(host)
	if s.Network == NetworkAllow && s.inAllow(host, port) {
		return true
	}
	for _, p := range s.Private {
		if h, pp, err := net.SplitHostPort(p); err == nil {
			if normHost(h) == host && pp == port {
				return true
			}
			continue
		}
		if normHost(p) == host {
			return true
		}
	}
	return false
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}
