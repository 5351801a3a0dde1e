//go:build linux

package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
)

// serverFDs is the descriptor limit the flooded server runs with: fewer
// than the flood, so that without the bound it runs out.
const serverFDs = 16384

// The control's scale: a smaller server and flood, opened well within
// the header timeout, after which the flood's first connections end.
const controlFDs, controlFlood = 2048, 3000

// TestReliabilityHTTPUnauthFlood is issue 34's starvation trial for
// `agent mcp --http`: some 20,000 idle connections without a request, and
// 200 that got a 401 and stay open on the client's side, leave a client
// with the token answered, and the server holds no more than
// MaxUnauthConns of them. Judged from outside: the server is a real
// process, its descriptors are counted in /proc. The positive control
// floods an agent linked with mcp.unauthBoundOff (no bound) that has
// 2,048 descriptors with 3,000 connections: the call is not answered
// while the flood holds. (At 20,000 the flood takes about as long as
// the header timeout here, which would let the call through either way.)
func TestReliabilityHTTPUnauthFlood(t *testing.T) {
	flood := floodSize(t)
	home := sharedHome(t)

	t.Run("bounded", func(t *testing.T) {
		url, stderr, cmd := startHTTP(t, home, "--token", "t0k")
		limitFDs(t, cmd.Process.Pid, serverFDs)
		start := time.Now()
		n := openIdle(t, url, flood)
		refused := wrongToken(t, url, 200)
		t.Logf("%d idle connections and %d refused ones opened in %v; the server holds %d descriptors (limit %d)", n, refused, time.Since(start).Round(time.Millisecond), fdCount(t, cmd.Process.Pid), serverFDs)
		if n < serverFDs {
			t.Fatalf("only %d idle connections opened, fewer than the server's %d descriptors", n, serverFDs)
		}
		if got := fdCount(t, cmd.Process.Pid); got > mcp.MaxUnauthConns+200 {
			t.Errorf("the server holds %d descriptors after the flood, want at most MaxUnauthConns (%d) and its own", got, mcp.MaxUnauthConns)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := echoCall(ctx, url, "t0k"); err != nil {
			t.Fatalf("the client with the token during the flood: %v\n%s", err, stderr.String())
		}
	})

	t.Run("unbounded control", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "agent-unbounded")
		build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-ldflags", "-X github.com/agentskills/agent/cmd/agent/internal/mcp.unauthBoundOff=1", "-o", bin, "./cmd/agent")...)
		build.Dir = moduleRoot
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build the unbounded agent: %v\n%s", err, out)
		}
		url, _, cmd := startHTTPBin(t, bin, home, nil, "--token", "t0k")
		limitFDs(t, cmd.Process.Pid, controlFDs)
		start := time.Now()
		n := openIdle(t, url, controlFlood)
		// The server accepts what waits in its backlog until it runs out.
		held := 0
		if !eventually(5*time.Second, func() bool { held = fdCount(t, cmd.Process.Pid); return held >= controlFDs-8 }) {
			t.Fatalf("the flood left the unbounded server %d of its %d descriptors: the control shows nothing", held, controlFDs)
		}
		t.Logf("%d idle connections opened in %v; the unbounded server holds %d descriptors (limit %d)", n, time.Since(start).Round(time.Millisecond), held, controlFDs)
		// The flood's first connections end at the header timeout (10 s)
		// and let the server accept again, so the call is judged within
		// 3 s and only when that ends before it.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		err := echoCall(ctx, url, "t0k")
		if time.Since(start) >= 9*time.Second {
			t.Skipf("the flood took %v, too near the header timeout to judge the control", time.Since(start))
		}
		if err == nil {
			t.Errorf("without the bound the call was answered during the flood (server holding %d descriptors): the trial cannot fail", held)
		}
	})
}

// floodSize raises this process's descriptor limit as far as it may and
// returns how many connections the flood opens: 20,000, or what the limit
// leaves (without CAP_SYS_RESOURCE the hard limit stays).
func floodSize(t *testing.T) int {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	old := lim
	raised := lim
	raised.Cur, raised.Max = 30000, max(30000, lim.Max)
	if unix.Setrlimit(unix.RLIMIT_NOFILE, &raised) == nil {
		lim = raised
	} else { // no CAP_SYS_RESOURCE: up to the hard limit
		lim.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &old) })
	n := min(20000, int(lim.Cur)-500)
	if n <= serverFDs+500 {
		t.Skipf("RLIMIT_NOFILE %d leaves too few descriptors to flood a server with %d", lim.Cur, serverFDs)
	}
	return n
}

// limitFDs gives the server n descriptors (the test's own limit, which it
// inherited, is higher).
func limitFDs(t *testing.T, pid, n int) {
	t.Helper()
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}, nil); err != nil {
		t.Fatal(err)
	}
}

func fdCount(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// openIdle opens up to n connections to url's host that send nothing and
// keeps them open until the test ends; it returns how many connected.
func openIdle(t *testing.T, url string, n int) int {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), mcp.Path)
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: 3 * time.Second}
			for range work {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return len(conns)
}

// wrongToken sends n requests with a wrong token, each on a connection of
// its own that the client keeps open; it returns how many were answered
// 401.
func wrongToken(t *testing.T, url string, n int) int {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), mcp.Path)
	refused := 0
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer guess\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", mcp.Path, addr, len(initializeBody), initializeBody)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			refused++
		}
	}
	return refused
}

// echoCall connects with token, as an MCP client does, and calls echo.
func echoCall(ctx context.Context, url, token string) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerOn{tr, token}}}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through the flood"}})
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("echo: %+v", res.Content)
	}
	return nil
}

// bearerOn is bearer on a transport of its own, which the flood's end
// does not share.
type bearerOn struct {
	tr    *http.Transport
	token string
}

func (b bearerOn) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.tr.RoundTrip(r)
}

// TestHTTP401Closes: a response to a request without the right token
// ends its connection (Connection: close); one with the token keeps it
// alive for the next request (the control).
func TestHTTP401Closes(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	url, _ := httpServer(t, home, "--token", "s3cret")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), mcp.Path)
	send := func(c net.Conn, br *bufio.Reader, auth string) (*http.Response, error) {
		h := ""
		if auth != "" {
			h = "Authorization: " + auth + "\r\n"
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", mcp.Path, addr, h, len(initializeBody), initializeBody)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, nil
	}
	for _, tc := range []struct {
		name, auth string
		want       int
		keeps      bool
	}{
		{"no token", "", http.StatusUnauthorized, false},
		{"wrong token", "Bearer guess", http.StatusUnauthorized, false},
		{"basic", "Basic czNjcmV0", http.StatusUnauthorized, false},
		{"right token", "Bearer s3cret", http.StatusOK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			resp, err := send(c, br, tc.auth)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.keeps {
				if resp, err := send(c, br, tc.auth); err != nil || resp.StatusCode != tc.want {
					t.Errorf("a second request on the authenticated connection: %v %v", resp, err)
				}
				return
			}
			if !resp.Close {
				t.Error("no Connection: close")
			}
			// The server's end, judged by the client: EOF, not a timeout.
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if n, err := br.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after a %d the connection was kept: read %d, %v; want EOF", tc.want, n, err)
			}
		})
	}
}
