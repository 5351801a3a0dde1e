package mcp

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxUnauthConns bounds the connections to `agent mcp --http` that have
// not yet carried a request with the right token. When one more is
// accepted, the oldest of them is closed at once: idle or refused
// connections, however many a local process opens, hold at most this
// many of the server's descriptors, and a client with the token, whose
// request follows its connect at once, is still served (issue 34: 19,990
// idle connections left it unanswered). Closing the new connection
// instead would let the oldest ones lock every client out.
const MaxUnauthConns = 128

// Timeouts of `agent mcp --http`: a request's header must arrive within
// httpHeaderTimeout, and a kept-alive connection is closed after
// httpIdleTimeout without a request.
const (
	httpHeaderTimeout = 10 * time.Second
	httpIdleTimeout   = 2 * time.Minute
)

// unauthBoundOff, set at link time (-X) by a test's positive control
// only, serves without the bound, as before issue 34.
var unauthBoundOff string

func maxUnauthConns() int {
	if b, _ := strconv.ParseBool(unauthBoundOff); b {
		return 0
	}
	return MaxUnauthConns
}

// connGate counts the server's unauthenticated connections, oldest first.
type connGate struct {
	max int // 0: no bound

	mu      sync.Mutex
	unauth  *list.List // of net.Conn
	entries map[net.Conn]*list.Element
}

func newConnGate(max int) *connGate {
	return &connGate{max: max, unauth: list.New(), entries: map[net.Conn]*list.Element{}}
}

type connKey struct{}

// withConn is the server's ConnContext: each request knows its
// connection, for authenticated.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// state is the server's ConnState hook: a new connection is counted
// (closing the oldest beyond max), a closed one forgotten.
func (g *connGate) state(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		var evict net.Conn
		g.mu.Lock()
		if g.max > 0 && g.unauth.Len() >= g.max {
			e := g.unauth.Front()
			evict = e.Value.(net.Conn)
			g.unauth.Remove(e)
			delete(g.entries, evict)
		}
		g.entries[c] = g.unauth.PushBack(c)
		g.mu.Unlock()
		if evict != nil {
			evict.Close()
		}
	case http.StateClosed, http.StateHijacked:
		g.forget(c)
	}
}

// authenticated takes the connection of a request with the right token
// out of the count.
func (g *connGate) authenticated(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(net.Conn); ok {
		g.forget(c)
	}
}

func (g *connGate) forget(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.entries[c]; ok {
		g.unauth.Remove(e)
		delete(g.entries, c)
	}
}

// closeUnlessAuthenticated marks every response "Connection: close"
// unless challenge let its request through: a 401, a foreign Origin's
// 403 or a 404 ends the connection instead of keeping it alive.
func closeUnlessAuthenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		next.ServeHTTP(w, r)
	})
}
