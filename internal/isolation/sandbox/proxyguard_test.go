//go:build linux && !portable

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// seams replaces the proxy's resolver and dialer for one test (proxies
// made after it), recording what was looked up and dialed.
type seams struct {
	mu      sync.Mutex
	lookups []string
	dials   []string
}

func withSeams(t *testing.T, lookup func(host string, n int) []string, dial func(addr string) (net.Conn, error)) *seams {
	t.Helper()
	s := &seams{}
	oldLookup, oldDial := lookupHost, dialUpstream
	t.Cleanup(func() { lookupHost, dialUpstream = oldLookup, oldDial })
	lookupHost = func(_ context.Context, host string) ([]net.IPAddr, error) {
		s.mu.Lock()
		s.lookups = append(s.lookups, host)
		n := len(s.lookups)
		s.mu.Unlock()
		var out []net.IPAddr
		for _, a := range lookup(host, n) {
			out = append(out, net.IPAddr{IP: net.ParseIP(a)})
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
	if dial != nil {
		dialUpstream = func(ctx context.Context, network, addr string) (net.Conn, error) {
			s.mu.Lock()
			s.dials = append(s.dials, addr)
			s.mu.Unlock()
			return dial(addr)
		}
	}
	return s
}

func (s *seams) seen() (lookups, dials []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lookups...), append([]string(nil), s.dials...)
}

// startProxy serves a proxy for hosts on a loopback listener of the test.
func startProxy(t *testing.T, hosts ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := serveProxy(l, hosts)
	t.Cleanup(p.close)
	return l.Addr().String()
}

// echoServer is a loopback TCP server that echoes, counting connections.
func echoServer(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return l.Addr().String(), accepted
}

// connect asks the proxy at proxyAddr for a tunnel to target: the
// response, and the connection when it is 200 (closed by the test's end).
func connect(t *testing.T, proxyAddr, target string) (*http.Response, string, net.Conn) {
	t.Helper()
	resp, body, c, err := tryConnect(t, proxyAddr, target)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body, c
}

// tryConnect is connect for a caller that polls: a connection the
// proxy refuses or resets is an error, not the test's end.
func tryConnect(t *testing.T, proxyAddr, target string) (*http.Response, string, net.Conn, error) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, "", nil, err
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, "", nil, fmt.Errorf("CONNECT %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		return resp, string(b), nil, nil
	}
	return resp, "", bufConn{c, br}, nil
}

// bufConn reads what its reader buffered past the CONNECT's answer first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// echoes reports whether a tunnel carries bytes both ways.
func echoes(t *testing.T, c net.Conn) bool {
	t.Helper()
	if _, err := io.WriteString(c, "ping"); err != nil {
		return false
	}
	b := make([]byte, 4)
	_, err := io.ReadFull(c, b)
	return err == nil && string(b) == "ping"
}

// TestProxyNamesReachPublicOnly: a declared name reaches public addresses
// only; a loopback, private or link-local one must be declared as itself
// (issue 34: a name resolving to 127.0.0.1 was tunnelled to loopback).
func TestProxyNamesReachPublicOnly(t *testing.T) {
	// withSeams swaps the proxy's resolver and dialer: not parallel.
	echo, accepted := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	named := func(name string) string { return net.JoinHostPort(name, port) }
	addrs := map[string][]string{
		"rebind.example.test":   {"127.0.0.1"},
		"metadata.example.test": {"169.254.169.254"},
		"lan.example.test":      {"192.168.1.20"},
		"cgnat.example.test":    {"100.64.0.9"},
		"ula.example.test":      {"fd00::5"},
		"mapped.example.test":   {"::ffff:127.0.0.1"},
		"nat64.example.test":    {"64:ff9b::a9fe:a9fe"}, // 169.254.169.254
		"mixed.example.test":    {"93.184.216.34", "10.1.2.3"},
		"zero.example.test":     {"0.0.0.0"},
	}
	// Only the loopback server is ever dialed: a refused name that got
	// through would be dialed here and nowhere else.
	s := withSeams(t, func(host string, _ int) []string { return addrs[host] }, func(addr string) (net.Conn, error) {
		if addr != echo && addr != "[::1]:"+port {
			t.Errorf("dialed %s", addr)
			return nil, errors.New("the test dials nothing but its loopback server")
		}
		return net.Dial("tcp", addr)
	})
	hosts := []string{echo, named("localhost")}
	for h := range addrs {
		hosts = append(hosts, named(h))
	}
	px := startProxy(t, hosts...)

	for _, tc := range []struct {
		name, host, kind string
	}{
		{"loopback", "rebind.example.test", "loopback"},
		{"metadata", "metadata.example.test", "link-local"},
		{"private", "lan.example.test", "private"},
		{"carrier-grade NAT", "cgnat.example.test", "shared"},
		{"unique local", "ula.example.test", "private"},
		{"mapped loopback", "mapped.example.test", "loopback"},
		{"NAT64 of metadata", "nat64.example.test", "link-local"},
		{"one private among public", "mixed.example.test", "private"},
		{"unspecified", "zero.example.test", "unspecified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, _ := connect(t, px, named(tc.host))
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, tc.kind) || !strings.Contains(body, "declare the address itself") {
				t.Errorf("CONNECT %s: %s %q, want 403 naming the address as %s and what to declare", tc.host, resp.Status, body, tc.kind)
			}
		})
	}
	t.Run("plain http", func(t *testing.T) {
		c, err := net.Dial("tcp", px)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", named("rebind.example.test"), named("rebind.example.test"))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "loopback") {
			t.Errorf("GET through a name resolving to loopback: %s %q, want 403", resp.Status, b)
		}
	})
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the loopback server was reached %d times through refused names", n)
	}
	// The positive control: the same listener, declared as itself.
	for _, target := range []string{echo, named("localhost")} {
		resp, body, c := connect(t, px, target)
		if resp.StatusCode != http.StatusOK || !echoes(t, c) {
			t.Errorf("CONNECT %s (declared literally): %s %q, want a working tunnel", target, resp.Status, body)
		}
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("the loopback server saw %d connections, want 2", n)
	}
	if lookups, _ := s.seen(); len(lookups) != len(addrs)+1 {
		t.Errorf("lookups %q: want one per refused name, none for a literal or localhost", lookups)
	}
}

// TestProxyDialsWhatItChecked: a public name is resolved once and dialed
// at the address that was checked, however the name resolves later (DNS
// rebinding).
func TestProxyDialsWhatItChecked(t *testing.T) {
	// withSeams: not parallel.
	echo, _ := echoServer(t)
	s := withSeams(t, func(_ string, n int) []string {
		if n == 1 {
			return []string{"93.184.216.34", "2606:2800:220:1::1"}
		}
		return []string{"127.0.0.1"}
	}, func(addr string) (net.Conn, error) {
		if addr == "93.184.216.34:443" {
			return nil, errors.New("unreachable here")
		}
		return net.Dial("tcp", echo) // stands in for the public host
	})
	px := startProxy(t, "api.example.test:443")
	resp, body, c := connect(t, px, "api.example.test:443")
	if resp.StatusCode != http.StatusOK || !echoes(t, c) {
		t.Fatalf("CONNECT to a public name: %s %q", resp.Status, body)
	}
	lookups, dials := s.seen()
	if want := []string{"93.184.216.34:443", "[2606:2800:220:1::1]:443"}; strings.Join(dials, " ") != strings.Join(want, " ") {
		t.Errorf("dialed %q, want the checked addresses %q in order", dials, want)
	}
	if len(lookups) != 1 {
		t.Errorf("looked up %q, want once", lookups)
	}
}

func TestAddrKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"2606:4700::1111", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"127.0.0.1", false},
		{"127.255.0.9", false},
		{"10.0.0.1", false},
		{"172.31.255.255", false},
		{"172.32.0.1", true},
		{"192.168.0.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"100.128.0.1", true},
		{"0.0.0.0", false},
		{"255.255.255.255", false},
		{"224.0.0.251", false},
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"fe80::1", false},
		{"fd12::1", false},
		{"ff02::1", false},
		{"2001:db8::1", true},  // documentation: no host's own network
		{"203.0.113.80", true}, // documentation: an intercepting network's proxy.golang.org
		{"2001::1", false},
		{"2002:7f00:1::1", false},
		{"fe80::1%eth0", false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			if got := addrKind(netip.MustParseAddr(tc.addr)) == ""; got != tc.public {
				t.Errorf("public(%s) = %v, want %v", tc.addr, got, tc.public)
			}
		})
	}
}

// FuzzResolve: whatever the target and whatever a name resolves to,
// resolve returns for a name only public addresses (judged by net/netip's
// own predicates and the blocks Go does not name), with the target's
// port, and nothing for a target hostKey would not admit.
func FuzzResolve(f *testing.F) {
	f.Add("api.example.test:443", []byte{127, 0, 0, 1})
	f.Add("[::1]:80", []byte{93, 184, 216, 34})
	f.Add("localhost:5432", []byte{169, 254, 169, 254})
	f.Add("EXAMPLE.com:0443", []byte(net.ParseIP("::ffff:10.0.0.1")))
	f.Add("1.2.3.4:65536", []byte{100, 64, 1, 1})
	f.Add("[fe80::1%25eth0]:1", []byte(net.ParseIP("64:ff9b::7f00:1")))
	shared := netip.MustParsePrefix("100.64.0.0/10")
	f.Fuzz(func(t *testing.T, hostport string, ip []byte) {
		target, ok := hostKey(hostport, "")
		if !ok {
			return
		}
		if again, ok := hostKey(target, ""); !ok || again != target {
			t.Fatalf("hostKey(%q) = %q, not canonical: %q %v", hostport, target, again, ok)
		}
		lookup := func(context.Context, string) ([]net.IPAddr, error) {
			return []net.IPAddr{{IP: ip}}, nil
		}
		addrs, err := resolve(context.Background(), lookup, target)
		if err != nil {
			return
		}
		host, port, _ := net.SplitHostPort(target)
		pn, perr := strconv.Atoi(port)
		if _, lerr := netip.ParseAddr(host); lerr == nil || host == "localhost" {
			return // named by the declaration itself
		}
		for _, a := range addrs {
			if perr != nil || int(a.Port()) != pn {
				t.Fatalf("%q dialed at port %d", target, a.Port())
			}
			x := a.Addr().Unmap()
			if x.IsLoopback() || x.IsPrivate() || x.IsLinkLocalUnicast() || x.IsLinkLocalMulticast() || x.IsMulticast() ||
				x.IsInterfaceLocalMulticast() || x.IsUnspecified() || shared.Contains(x) || x.Zone() != "" || !x.IsGlobalUnicast() {
				t.Fatalf("%q resolving to %v is dialed at %v", target, ip, a)
			}
		}
	})
}

// TestProxyTunnelBound: one proxy holds at most maxTunnels tunnels and
// maxClientConns connections; the next CONNECT gets 503 at once, and a
// closed tunnel gives its place back.
func TestProxyTunnelBound(t *testing.T) {
	t.Parallel()
	echo, _ := echoServer(t)
	px := startProxy(t, echo)
	var tunnels []net.Conn
	for range maxTunnels {
		resp, body, c := connect(t, px, echo)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tunnel %d: %s %q", len(tunnels)+1, resp.Status, body)
		}
		tunnels = append(tunnels, c)
	}
	resp, body, _ := connect(t, px, echo)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, strconv.Itoa(maxTunnels)) {
		t.Fatalf("CONNECT beyond the bound: %s %q, want 503", resp.Status, body)
	}
	if !echoes(t, tunnels[0]) {
		t.Error("an open tunnel stopped working at the bound")
	}
	// Connections that ask nothing: beyond maxClientConns they are
	// closed at once.
	var idle []net.Conn
	for range maxClientConns {
		c, err := net.Dial("tcp", px)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		t.Cleanup(func() { c.Close() })
	}
	last := idle[len(idle)-1]
	if _, err := last.Read(make([]byte, 1)); err == nil {
		t.Error("a connection beyond maxClientConns was kept")
	}
	for _, c := range idle {
		c.Close()
	}
	tunnels[0].Close()
	// The proxy counts a closed connection out only once its goroutine
	// sees the close, so until then a new one may be reset: poll.
	if !eventually(func() bool {
		resp, _, c, err := tryConnect(t, px, echo)
		if c != nil {
			c.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	}) {
		t.Error("a closed tunnel did not give its place back")
	}
}

// eventually polls ok for up to 10 s.
func eventually(ok func() bool) bool {
	for range 200 {
		if ok() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestProxyTunnelIdle: a tunnel silent both ways for tunnelIdle is
// closed; one busy one way only is kept.
func TestProxyTunnelIdle(t *testing.T) {
	// it sets tunnelIdle: not parallel.
	old := tunnelIdle
	tunnelIdle = time.Second
	t.Cleanup(func() { tunnelIdle = old })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The server streams 40 bytes 50 ms apart (2 s in all, twice the
	// idle timeout) and then stays silent.
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for range 40 {
					if _, err := c.Write([]byte{'x'}); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	px := startProxy(t, l.Addr().String())
	_, _, c := connect(t, px, l.Addr().String())
	if c == nil {
		t.Fatal("no tunnel")
	}
	b := make([]byte, 40)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("a tunnel busy one way was cut: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	if n, err := c.Read(b); err != io.EOF {
		t.Errorf("an idle tunnel was kept: read %d, %v; want EOF", n, err)
	}
}

// TestReliabilityProxyFlood is issue 34's starvation trial: a sandboxed process that
// opens 10,000 tunnels through its proxy holds at most maxTunnels of
// them, and another sandboxed process (another skill) is still served by
// its own proxy. The test process, which is the host of both proxies,
// runs with 12,000 descriptors: 10,000 tunnels would take 20,000 and
// more.
func TestReliabilityProxyFlood(t *testing.T) {
	need(t)
	// The system's python3, which System grants (a pyenv shim is not).
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = min(12000, old.Max)
	if lim.Cur < 10100 {
		t.Skipf("RLIMIT_NOFILE %d: the flooding child needs 10,100", old.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })

	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	t.Cleanup(hs.Close)
	srv := strings.TrimPrefix(hs.URL, "http://")
	bin, binDir := self(t)
	read := append([]string{binDir}, System...)
	flooder := exec.Command(py, "-c", floodScript, srv)
	flooder.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	flooder.Env = []string{"PATH=/usr/bin:/bin"}
	stdin, err := flooder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := flooder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	flooder.Stderr = os.Stderr
	release, err := Start(flooder, Policy{Read: read, Network: []string{srv}}, (*exec.Cmd).Start)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = flooder.Wait()
		release()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the flooding child said nothing: %v", err)
	}
	t.Logf("the flooding child, 10,000 CONNECTs: %s", strings.TrimSpace(line))
	var opened int
	fmt.Sscanf(line, "200=%d", &opened)
	if opened == 0 || opened > maxTunnels {
		t.Errorf("the flooding child holds %d tunnels, want 1 to %d", opened, maxTunnels)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	t.Logf("the host holds %d descriptors", len(fds))
	// Another skill's process, with a proxy of its own, while the flood
	// holds its tunnels.
	if ok, out := run(t, bin, Policy{Read: read, Network: []string{srv}}, "proxy", srv); !ok {
		t.Errorf("another sandboxed process got no tunnel during the flood: %s", out)
	}
}

// floodScript opens 10,000 CONNECTs to argv[1] through HTTPS_PROXY and
// holds them; it prints how each was answered (200=N 503=N closed=N
// error=N) and waits for its stdin to end.
const floodScript = `
import os, socket, sys
host, port = os.environ["HTTPS_PROXY"].split("//")[-1].rstrip("/").rsplit(":", 1)
target = sys.argv[1]
held, counts, fails = [], {"200": 0, "503": 0, "closed": 0, "error": 0}, 0
for i in range(10000):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect((host, int(port)))
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = s.recv(12)
        code = head[9:12].decode() if head.startswith(b"HTTP/1.1 ") else "closed"
        counts[code if code in counts else "error"] += 1
        fails = 0
    except OSError:
        counts["error"] += 1
        fails += 1
        if fails > 20:
            break
    held.append(s)
print(" ".join("%s=%d" % kv for kv in counts.items()), flush=True)
sys.stdin.read()
`
