// Package httpguard holds the checks every local HTTP server of agent
// makes before a handler runs (agent mcp --http, agent catalog serve):
// a browser page on another site must not drive the server (Origin), and
// a DNS name rebound to 127.0.0.1 must not reach it (Host).
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project, so any floor may import it.
package httpguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Origin answers 403 to a request whose Origin header names anything but
// a loopback host: a web page the user visits must not drive the server
// from the browser (MCP transports, "Security Warning"). Requests without
// Origin (every non-browser client, and a browser's own same-origin GET)
// pass.
func Origin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin, ok := r.Header["Origin"]; ok && (len(origin) != 1 || !LoopbackOrigin(origin[0])) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not a loopback address; browsers may not reach this server", strings.Join(origin, ", ")), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackOrigin reports whether origin is scheme://host[:port] with a
// loopback host (localhost, 127.0.0.0/8, ::1).
func LoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	return Loopback(u.Hostname())
}

// Host answers 403 to a request that reached a loopback listener under a
// Host that is not loopback: a DNS name its owner pointed at 127.0.0.1
// (DNS rebinding), which would make the server same-origin with that
// name's pages. A server listening on another address is meant to be
// reached by name, and is not checked. It is the rule go-sdk applies to
// agent mcp --http.
func Host(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
			if loopbackAddr(local.String()) && !loopbackAddr(r.Host) {
				http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Loopback reports whether host (no port) is localhost or a loopback IP.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	return Loopback(host)
}

// Serve serves srv on ln until ctx ends, then shuts it down, giving open
// requests 2 s: how agent's local HTTP servers run.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
