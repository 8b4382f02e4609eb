package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Network modes, as the commands' tools.network setting has them.
const (
	NetworkOn    = "on"
	NetworkOff   = "off"
	NetworkAllow = "allow"
)

// Resolver looks up a host's addresses. net.DefaultResolver is one; tests
// give their own to make a name resolve to a private address.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// BlockedError is a connection fetch refused to make.
type BlockedError struct {
	// Host is the host as the URL names it; Addr the address it resolved
	// to (invalid when the host itself was refused).
	Host string
	Addr netip.Addr
	// Why says what is wrong with it, in words for the model and the user.
	Why string
}

func (e *BlockedError) Error() string {
	if e.Addr.IsValid() {
		return fmt.Sprintf("refused to connect to %s (%s): %s", e.Host, e.Addr, e.Why)
	}
	return fmt.Sprintf("refused to connect to %s: %s", e.Host, e.Why)
}

// ErrNetworkOff is returned when the commands' network is off.
var ErrNetworkOff = errors.New(`the network is off for the agent (tools.network = "off"), and fetch follows it`)

// special lists address ranges that are not the public internet, with
// the words that name them. netip's own predicates cover loopback,
// RFC 1918 and ULA (private), link-local (the cloud metadata address
// 169.254.169.254 among them), multicast and unspecified.
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a 'this network' address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// The cloud metadata addresses (AWS, GCP, Azure; AWS's IPv6 one).
var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
)

// nat64 is the well-known NAT64 prefix: its addresses carry an IPv4
// address in their last 32 bits, judged as that address.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Blocked says why fetch must not connect to a, or "" for a public
// address.
func Blocked(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return Blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return "a loopback address (this machine)"
	case a.IsPrivate():
		return "a private network address"
	case a == metadataV4 || a == metadataV6:
		return "the cloud metadata address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.why
		}
	}
	return ""
}

// guard makes the connections of one fetch.
type guard struct {
	s        *Settings
	resolver Resolver
	dialer   net.Dialer
}

func newGuard(s *Settings) *guard {
	g := &guard{s: s, resolver: s.Resolver, dialer: net.Dialer{Timeout: 15 * time.Second}}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	return g
}

// dial resolves addr's host once, checks every address it gives, and
// connects to a checked one: what was checked is what is reached.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if why := g.s.hostRefused(host, port); why != "" {
		return nil, &BlockedError{Host: host, Why: why}
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	named := g.s.namedPrivate(host, port)
	for _, a := range addrs {
		if why := Blocked(a); why != "" && !named {
			return nil, &BlockedError{Host: host, Addr: a, Why: why + "; fetch reaches such addresses only for a host you name in tools.fetch_private"}
		}
	}
	var last error
	for _, a := range addrs {
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

func (g *guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	return addrs, nil
}
