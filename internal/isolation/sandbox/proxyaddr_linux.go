//go:build linux && !portable

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// ErrNotPublic is the proxy's refusal of a declared host name that
// resolves to an address which is not public (loopback, private,
// link-local and the like): such an address must be declared as itself.
var ErrNotPublic = errors.New("a declared host name reaches public addresses only")

// The proxy's two seams, replaced by tests only: how a declared name is
// resolved, and how a checked address is dialed.
var (
	lookupHost   = net.DefaultResolver.LookupIPAddr
	dialUpstream = (&net.Dialer{Timeout: proxyDialTimeout}).DialContext
)

// nonPublic are the address blocks a declared name may not reach, from
// IANA's special-purpose registries, each with what it is, for the 403.
// First match wins, so the narrower blocks come first. The documentation
// and benchmarking blocks are left out: they reach no host's own
// network, and networks that intercept egress resolve public names to
// them (here proxy.golang.org is 203.0.113.80).
var nonPublic = func() []struct {
	p    netip.Prefix
	kind string
} {
	var out []struct {
		p    netip.Prefix
		kind string
	}
	for _, b := range [][2]string{
		{"0.0.0.0/8", "unspecified (this network)"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (carrier-grade NAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local (cloud metadata)"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignment"},
		{"192.88.99.0/24", "6to4 relay"},
		{"192.168.0.0/16", "private"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved or broadcast"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/8", "reserved (IPv4-compatible)"},
		{"64:ff9b:1::/48", "local NAT64"},
		{"100::/64", "discard"},
		{"2001::/23", "IETF protocol assignment (Teredo)"},
		{"2002::/16", "6to4"},
		{"5f00::/16", "segment routing"},
		{"fc00::/7", "private (unique local)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	} {
		out = append(out, struct {
			p    netip.Prefix
			kind string
		}{netip.MustParsePrefix(b[0]), b[1]})
	}
	return out
}()

// nat64 is the well-known NAT64 prefix: its addresses stand for the IPv4
// address in their last 32 bits (DNS64 networks resolve every IPv4-only
// host so), which is what is judged.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// addrKind is "" for a public address, or what it is.
func addrKind(a netip.Addr) string {
	a = a.Unmap()
	if !a.IsValid() {
		return "invalid"
	}
	if a.Zone() != "" {
		return "scoped"
	}
	if nat64.Contains(a) {
		b := a.As16()
		return addrKind(netip.AddrFrom4([4]byte(b[12:])))
	}
	for _, b := range nonPublic {
		if b.p.Contains(a) {
			return b.kind
		}
	}
	return ""
}

// resolve is where target (a canonical host:port the skill declared) may
// be dialed: an address literal is itself and "localhost" is the
// loopback, both named by the declaration; any other name is resolved
// once, here, and every address it has must be public, or ErrNotPublic.
// The caller dials what resolve returns and resolves nothing again, so a
// name cannot pass the check with one address and be dialed at another
// (DNS rebinding).
func resolve(ctx context.Context, lookup func(context.Context, string) ([]net.IPAddr, error), target string) ([]netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("port %q is not between 1 and 65535", portText)
	}
	p := uint16(port)
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(a.Unmap(), p)}, nil
	}
	if host == "localhost" {
		return []netip.AddrPort{netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), p), netip.AddrPortFrom(netip.IPv6Loopback(), p)}, nil
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip.IP)
		if ok {
			a = a.Unmap().WithZone(ip.Zone)
		}
		if kind := addrKind(a); kind != "" {
			lit := netip.AddrPortFrom(a.WithZone(""), p)
			return nil, fmt.Errorf("%w: %s resolves to %s, a %s address; to reach it, declare the address itself (permissions.network: [%q])", ErrNotPublic, host, a, kind, lit)
		}
		out = append(out, netip.AddrPortFrom(a, p))
	}
	return out, nil
}
