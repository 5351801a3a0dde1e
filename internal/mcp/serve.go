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
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
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
		err := s.srv.Run(ctx, s.endOnEOF(&lineTransport{r: os.Stdin, w: os.Stdout}))
		if ctx.Err() != nil {
			return nil
		}
		return err
	})
}

// ServeTransport serves one session on t (tests and benchmarks use an
// in-memory transport).
func (s *Server) ServeTransport(ctx context.Context, t sdkmcp.Transport) error {
	return s.serve(ctx, func(ctx context.Context) error { return s.srv.Run(ctx, s.endOnEOF(t)) })
}

// endOnEOF wraps the one-session transport so that the end of its input
// (the client closed stdin, or the pipe broke) cancels every running call
// at once: go-sdk's Run waits for running handlers before it returns.
func (s *Server) endOnEOF(t sdkmcp.Transport) sdkmcp.Transport {
	return &eofTransport{Transport: t, onEOF: s.endCalls}
}

type eofTransport struct {
	sdkmcp.Transport
	onEOF func()
}

func (t *eofTransport) Connect(ctx context.Context) (sdkmcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &eofConn{Connection: c, onEOF: t.onEOF}, nil
}

type eofConn struct {
	sdkmcp.Connection
	onEOF func()
}

func (c *eofConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.onEOF()
	}
	return m, err
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
	// is known even when Addr asked for port 0).
	Ready func(addr string)
}

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
		MaxRequestBodyBytes: 64 << 20,
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
	mux.Handle(Path, auth.RequireBearerToken(verify, nil)(endOnDelete))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s.serve(ctx, func(ctx context.Context) error {
		if o.Ready != nil {
			o.Ready(ln.Addr().String())
		}
		errc := make(chan error, 1)
		go func() { errc <- hs.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	})
}

// LoadOrCreateToken returns the token kept in stateDir/TokenFile, making
// one (32 random bytes, hex) when there is none. created says whether it
// is new, so that a front end prints it once.
func LoadOrCreateToken(stateDir string) (token string, created bool, err error) {
	p := filepath.Join(stateDir, TokenFile)
	if b, err := os.ReadFile(p); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, false, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("read the MCP token %s: %w", p, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("generate an MCP token: %w", err)
	}
	token = hex.EncodeToString(b[:])
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", false, fmt.Errorf("create %s: %w", stateDir, err)
	}
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("write the MCP token %s: %w", p, err)
	}
	return token, true, nil
}
