package mcp

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/ground/httpguard"
	"github.com/agentskills/agent/internal/telemetry"
)

// Errors of the HTTP transport.
var (
	ErrNotLoopback = errors.New("the MCP HTTP server listens on loopback only")
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

// TokenFile is where a generated token is kept, under $AGENT_HOME/state.
const TokenFile = "mcp-token"

// ServeStdio serves one session on stdin/stdout until the client closes
// stdin or ctx ends, then stops every plugin.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.serve(ctx, func(ctx context.Context) error {
		err := s.srv.Run(ctx, s.oneSession(&lineTransport{r: os.Stdin, w: os.Stdout}))
		if ctx.Err() != nil {
			return nil
		}
		return err
	})
}

// ServeTransport serves one session on t (tests and benchmarks use an
// in-memory transport).
func (s *Server) ServeTransport(ctx context.Context, t sdkmcp.Transport) error {
	return s.serve(ctx, func(ctx context.Context) error { return s.srv.Run(ctx, s.oneSession(t)) })
}

// oneSession is what a one-session transport is served through: calls
// are answered before stdin EOF ends the session, and tools/call is
// answered directly unless tracing is on (its spans are go-sdk
// middleware).
func (s *Server) oneSession(t sdkmcp.Transport) sdkmcp.Transport {
	t = s.endOnEOF(t)
	if s.viaSDK || telemetry.Enabled() {
		return t
	}
	return &directCalls{Transport: t, s: s}
}

// endOnEOF wraps the one-session transport so that the end of its input
// (the client closed stdin, or the pipe broke) first lets the calls it
// sent be answered (SPEC §13: `printf '...' | agent mcp` gets every
// answer), then, after drainTimeout, cancels the ones still running (a
// client that went away cancels its calls, §12), and only then reports
// the end to go-sdk, which refuses to write once it has seen it.
func (s *Server) endOnEOF(t sdkmcp.Transport) sdkmcp.Transport {
	return &eofTransport{Transport: t, onEOF: s.endCalls}
}

// drainTimeout is how long calls still running at stdin EOF may take to
// answer before they are cancelled; the cancelled calls then answer too.
const drainTimeout = 5 * time.Second

type eofTransport struct {
	sdkmcp.Transport
	onEOF func()
}

func (t *eofTransport) Connect(ctx context.Context) (sdkmcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &eofConn{Connection: c, onEOF: t.onEOF, pending: map[jsonrpc.ID]bool{}, answered: make(chan struct{}, 1)}, nil
}

// eofConn counts the calls read and not yet answered.
type eofConn struct {
	sdkmcp.Connection
	onEOF func()

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool
	answered chan struct{} // a pending call was answered (or dropped)
}

func (c *eofConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain(ctx)
		c.onEOF()
		return m, err
	}
	if req, ok := m.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.IsCall():
			c.pending[req.ID] = true
		default:
			if id, ok := cancelledID(req); ok {
				delete(c.pending, id) // a cancelled call gets no answer
			}
		}
		c.mu.Unlock()
	}
	return m, err
}

// setInline passes claim on to the connection below, counting the calls
// it claims as pending like the ones Read returns.
func (c *eofConn) setInline(claim func(jsonrpc.Message) (func(), bool)) bool {
	in, ok := c.Connection.(inliner)
	return ok && in.setInline(func(m jsonrpc.Message) (func(), bool) {
		run, ok := claim(m)
		if ok {
			c.mu.Lock()
			c.pending[m.(*jsonrpc.Request).ID] = true
			c.mu.Unlock()
		}
		return run, ok
	})
}

func (c *eofConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if resp, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// drain waits until every pending call is answered: up to drainTimeout
// as they are, then as long again after cancelling them.
func (c *eofConn) drain(ctx context.Context) {
	wait := func(d time.Duration) bool {
		timer := time.NewTimer(d)
		defer timer.Stop()
		for {
			c.mu.Lock()
			n := len(c.pending)
			c.mu.Unlock()
			if n == 0 {
				return true
			}
			select {
			case <-c.answered:
			case <-timer.C:
				return false
			case <-ctx.Done():
				return false
			}
		}
	}
	if !wait(drainTimeout) {
		c.onEOF()
		wait(drainTimeout)
	}
}

func (s *Server) serve(ctx context.Context, run func(context.Context) error) error {
	// SIGTERM (ctx) cancels the running calls too, so that Run returns.
	stop := context.AfterFunc(ctx, s.endCalls)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	bg := make(chan struct{})
	go func() { defer close(bg); s.Run(ctx) }()
	err := run(ctx)
	cancel()
	<-bg
	s.Close()
	return err
}

// HTTPOptions configure ServeHTTP.
type HTTPOptions struct {
	Addr  string // host:port; the host must be a loopback address
	Token string // bearer token every request must carry
	// Ready, if set, is called with the address listened on (the port
	// is known even when Addr asked for port 0), before any request is
	// served. Keep state (a generated token) here, not before ServeHTTP:
	// nothing is written when the bind fails. An error ends ServeHTTP.
	Ready func(addr string) error
	// Metrics, if set, is served at MetricsPath behind the same token
	// (telemetry.Metrics.Handler).
	Metrics http.Handler
}

// MaxRequestBody caps an HTTP request body while it is read (SPEC §13):
// a larger one is refused with 413 having cost at most this much memory.
// It is also the longest stdio message go-sdk accepts by default.
const MaxRequestBody = 16 << 20

// ServeHTTP serves streamable HTTP at Path on a loopback address until
// ctx ends. Every request needs "Authorization: Bearer <token>"; go-sdk
// refuses a loopback request whose Host header is not loopback (DNS
// rebinding).
func (s *Server) ServeHTTP(ctx context.Context, o HTTPOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("--http %q: want 127.0.0.1:PORT: %w", o.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--http %q: %w; use 127.0.0.1:PORT or [::1]:PORT", o.Addr, ErrNotLoopback)
	}
	if o.Token == "" {
		return errors.New("the HTTP server needs a token")
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	handler := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s.srv }, &sdkmcp.StreamableHTTPOptions{
		Logger:              s.log,
		MaxRequestBodyBytes: MaxRequestBody,
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(o.Token)) != 1 {
			return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	endOnDelete := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			s.endSession(r.Header.Get("Mcp-Session-Id"))
		}
		handler.ServeHTTP(w, r)
	})
	gate := newConnGate(maxUnauthConns())
	mux.Handle(Path, checkOrigin(gate.challenge(o.Token, auth.RequireBearerToken(verify, nil)(endOnDelete))))
	if o.Metrics != nil {
		mux.Handle(MetricsPath, checkOrigin(gate.challenge(o.Token, o.Metrics)))
	}
	// No ReadTimeout: net/http keeps its deadline on the connection while
	// the handler runs and cancels the request's context when it passes,
	// which would end every tool call and event stream longer than it.
	// The header has ReadHeaderTimeout; a body is read only once the
	// token was checked.
	hs := &http.Server{
		Handler:           closeUnlessAuthenticated(mux),
		ReadHeaderTimeout: httpHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		ConnState:         gate.state,
		ConnContext:       withConn,
	}
	return s.serve(ctx, func(ctx context.Context) error {
		if o.Ready != nil {
			if err := o.Ready(ln.Addr().String()); err != nil {
				ln.Close()
				return err
			}
		}
		return httpguard.Serve(ctx, hs, ln)
	})
}

// checkOrigin answers 403 to a request whose Origin header names
// anything but a loopback host (httpguard.Origin).
func checkOrigin(next http.Handler) http.Handler { return httpguard.Origin(next) }

// challenge answers a request without the right bearer token with 401 and
// "WWW-Authenticate: Bearer" (RFC 6750), which clients such as Claude Code
// need to ask for the token instead of reporting a failed connection.
// go-sdk's RequireBearerToken, behind it, sends that header only with
// OAuth metadata. A request with the right token authenticates its
// connection, which then keeps alive and leaves the gate's count.
func (g *connGate) challenge(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case !ok || !strings.EqualFold(scheme, "bearer"):
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent mcp"`)
			http.Error(w, "no bearer token: send Authorization: Bearer <token> (agent mcp --token, or the token it printed)", http.StatusUnauthorized)
			return
		case subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(token)) != 1:
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent mcp", error="invalid_token"`)
			http.Error(w, "wrong bearer token", http.StatusUnauthorized)
			return
		}
		w.Header().Del("Connection")
		g.authenticated(r.Context())
		next.ServeHTTP(w, r)
	})
}

// LoadToken returns the token kept in stateDir/TokenFile, or "" when
// there is none.
func LoadToken(stateDir string) (string, error) {
	p := filepath.Join(stateDir, TokenFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the MCP token %s: %w", p, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// NewToken makes a token: 32 random bytes, hex.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate an MCP token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// SaveToken keeps token in stateDir/TokenFile (0600) for the next start.
func SaveToken(stateDir, token string) error {
	p := filepath.Join(stateDir, TokenFile)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", stateDir, err)
	}
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the MCP token %s: %w", p, err)
	}
	return nil
}
