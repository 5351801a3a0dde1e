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
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// proxyDialTimeout bounds the proxy's connect to a declared host.
const proxyDialTimeout = 15 * time.Second

// maxTunnels bounds what one proxy, that is one sandboxed process (a
// script run, a command, a skill plugin), holds upstream at once: CONNECT
// tunnels and plain http requests in flight. A request beyond it gets
// 503 at once. With maxClientConns it caps the host's descriptors one
// process can spend through its proxy near 2*256+64 whatever it opens,
// so one skill cannot starve another skill, the exec plugin or `agent
// mcp` of descriptors (issue 34's probe held 9,000 tunnels).
const maxTunnels = 256

// maxClientConns bounds the connections to the proxy's listener; one
// beyond it is closed as soon as it is accepted. It leaves room above
// maxTunnels for the connections that are told 503.
const maxClientConns = maxTunnels + 64

// Idle timeouts. A tunnel with no byte either way for tunnelIdle is
// closed (a variable for tests); a client's connection waits at most
// proxyHeaderTimeout for a request's header and proxyClientIdle between
// requests.
var tunnelIdle = 5 * time.Minute

const (
	proxyHeaderTimeout = 30 * time.Second
	proxyClientIdle    = time.Minute
)

// Hosts are the host:port entries of permissions.network (not "*"),
// each as net.JoinHostPort of its lower-cased host and its port: what
// the proxy admits.
func (p Policy) Hosts() []string {
	var out []string
	for _, n := range p.Network {
		if k, ok := hostKey(n, ""); ok && n != "*" {
			out = append(out, k)
		}
	}
	return out
}

// hostKey is the canonical form of host:port (defPort when it has no
// port), or false.
func hostKey(hostport, defPort string) (string, bool) {
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		if defPort == "" || strings.Contains(hostport, ":") && !strings.HasPrefix(hostport, "[") {
			return "", false
		}
		h, port = strings.Trim(hostport, "[]"), defPort
	}
	if h == "" || port == "" {
		return "", false
	}
	return net.JoinHostPort(strings.ToLower(h), port), true
}

// proxy is the HTTP proxy a child with declared hosts reaches them by
// (SPEC §8): CONNECT tunnels and plain http requests in absolute form,
// to the declared host:port entries only, a declared name at its public
// addresses only (resolve). It listens inside the child's network
// namespace (the listener was made there) and dials from the host's,
// since a socket stays in the namespace it was made in whatever thread
// uses it.
type proxy struct {
	allowed map[string]bool
	srv     *http.Server
	forward *httputil.ReverseProxy
	lookup  func(context.Context, string) ([]net.IPAddr, error)
	dialer  func(ctx context.Context, network, addr string) (net.Conn, error)
	slots   chan struct{} // one per upstream connection held: maxTunnels
	idle    time.Duration // tunnelIdle when it was made

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// serveProxy serves l for hosts until close.
func serveProxy(l net.Listener, hosts []string) *proxy {
	p := &proxy{
		allowed: map[string]bool{},
		conns:   map[net.Conn]struct{}{},
		lookup:  lookupHost,
		dialer:  dialUpstream,
		slots:   make(chan struct{}, maxTunnels),
		idle:    tunnelIdle,
	}
	for _, h := range hosts {
		p.allowed[h] = true
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport: &http.Transport{
			Proxy:           nil,
			DialContext:     func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
			MaxIdleConns:    4,
			IdleConnTimeout: 30 * time.Second,
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			refuse(w, err)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: proxyHeaderTimeout, IdleTimeout: proxyClientIdle}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(&limitListener{Listener: l, max: maxClientConns})
	}()
	return p
}

// refuse answers a failed dial: 403 when the address was refused, 502
// when it could not be reached.
func refuse(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway
	if errors.Is(err, ErrNotPublic) {
		code = http.StatusForbidden
	}
	http.Error(w, "agent sandbox proxy: "+err.Error(), code)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target, ok := "", false
	switch {
	case r.Method == http.MethodConnect:
		target, ok = hostKey(r.Host, "")
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		target, ok = hostKey(r.URL.Host, "80")
	default:
		http.Error(w, "agent sandbox proxy: only CONNECT host:port and absolute http:// requests are served", http.StatusForbidden)
		return
	}
	if !ok || !p.allowed[target] {
		http.Error(w, fmt.Sprintf("agent sandbox proxy: %s is not in the skill's permissions.network; declare it in SKILL.md (permissions.network: [%s])", r.Host, r.Host), http.StatusForbidden)
		return
	}
	select {
	case p.slots <- struct{}{}:
	default:
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("agent sandbox proxy: this process holds %d connections through the proxy, the most it may; close some", maxTunnels), http.StatusServiceUnavailable)
		return
	}
	defer func() { <-p.slots }()
	if r.Method != http.MethodConnect {
		p.forward.ServeHTTP(w, r)
		return
	}
	up, err := p.dial(r.Context(), target)
	if err != nil {
		refuse(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "agent sandbox proxy: cannot tunnel over this connection", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.untrack(up, down)
		return
	}
	p.splice(up, down, rw.Reader)
}

// dial connects to target (declared) at the addresses resolve checked,
// in order, and resolves nothing again.
func (p *proxy) dial(ctx context.Context, target string) (net.Conn, error) {
	addrs, err := resolve(ctx, p.lookup, target)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		c, err := p.dialer(ctx, "tcp", a.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// splice copies both ways (the client's bytes already buffered first)
// until both directions end, passing each end on as a half close; a
// tunnel idle both ways for tunnelIdle, or a failed write, closes both.
func (p *proxy) splice(up, down net.Conn, buffered *bufio.Reader) {
	var last atomic.Int64 // unix nanoseconds of the last byte either way
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn, r io.Reader) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(p.idle))
			n, err := r.Read(buf)
			if n > 0 {
				last.Store(time.Now().UnixNano())
				_ = dst.SetWriteDeadline(time.Now().Add(p.idle))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					up.Close()
					down.Close()
					return
				}
			}
			var ne net.Error
			switch {
			case err == nil:
			case errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < p.idle:
				// The other way was busy meanwhile.
			case errors.Is(err, io.EOF):
				if c, ok := dst.(interface{ CloseWrite() error }); ok {
					_ = c.CloseWrite()
				} else {
					_ = dst.Close()
				}
				return
			default:
				up.Close()
				down.Close()
				return
			}
		}
	}
	go pipe(up, down, buffered)
	go pipe(down, up, up)
	wg.Wait()
	p.untrack(up, down)
}

// track records the tunnel's connections for close, or closes them when
// the proxy is already closed.
func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// close ends the proxy with its child's run: the listener, the requests
// in flight and the tunnels (which http.Server.Close does not know of,
// being hijacked), and waits for the server to return.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	_ = p.srv.Close()
	if t, ok := p.forward.Transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	p.wg.Wait()
}

// limitListener closes a connection beyond max open ones as soon as it
// is accepted, so that the descriptors a client holds open at the proxy
// stay bounded however many it opens (the kernel's backlog, not the
// host, holds the rest).
type limitListener struct {
	net.Listener
	max  int32
	open atomic.Int32
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.Close()
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

// countedConn gives its place back to its limitListener when closed.
type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// CloseWrite passes a tunnel's half close on.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
