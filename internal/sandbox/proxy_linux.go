//go:build linux && !portable

package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// proxyDialTimeout bounds the proxy's connect to a declared host.
const proxyDialTimeout = 15 * time.Second

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
// to the declared host:port entries only. It listens inside the child's
// network namespace (the listener was made there) and dials from the
// host's, since a socket stays in the namespace it was made in whatever
// thread uses it.
type proxy struct {
	allowed map[string]bool
	srv     *http.Server
	forward *httputil.ReverseProxy
	dialer  net.Dialer

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// serveProxy serves l for hosts until close.
func serveProxy(l net.Listener, hosts []string) *proxy {
	p := &proxy{allowed: map[string]bool{}, conns: map[net.Conn]struct{}{}}
	p.dialer.Timeout = proxyDialTimeout
	for _, h := range hosts {
		p.allowed[h] = true
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport: &http.Transport{Proxy: nil, DialContext: p.dialer.DialContext, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(l)
	}()
	return p
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
	if r.Method != http.MethodConnect {
		p.forward.ServeHTTP(w, r)
		return
	}
	up, err := p.dialer.DialContext(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, "agent sandbox proxy: "+err.Error(), http.StatusBadGateway)
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

// splice copies both ways (the client's bytes already buffered first)
// until both directions end, passing each end on as a half close.
func (p *proxy) splice(up, down net.Conn, buffered *bufio.Reader) {
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst net.Conn, src io.Reader) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	go pipe(up, buffered)
	go pipe(down, up)
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
