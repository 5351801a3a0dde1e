//go:build unix

package mcp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer starts `agent mcp --http 127.0.0.1:0 args...` and returns
// its URL once it listens.
func httpServer(t *testing.T, home string, args ...string) (url string, stderr *lockedWriter) {
	t.Helper()
	url, stderr, _ = startHTTP(t, home, args...)
	return url, stderr
}

// startHTTP is httpServer that also returns the server's process.
func startHTTP(t *testing.T, home string, args ...string) (url string, stderr *lockedWriter, cmd *exec.Cmd) {
	t.Helper()
	return startHTTPEnv(t, home, nil, args...)
}

// startHTTPEnv is startHTTP with more environment for the server.
func startHTTPEnv(t *testing.T, home string, extraEnv []string, args ...string) (url string, stderr *lockedWriter, cmd *exec.Cmd) {
	t.Helper()
	return startHTTPBin(t, agentBin, home, extraEnv, args...)
}

// startHTTPBin is startHTTPEnv with another agent binary.
func startHTTPBin(t *testing.T, bin, home string, extraEnv []string, args ...string) (url string, stderr *lockedWriter, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env(home, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
			// Reaped: its group id is no longer ours to kill (another
			// test's group may have it), and its plugins end with it.
		case <-time.After(10 * time.Second):
			t.Error("agent mcp --http did not end on SIGTERM")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	stderr = &lockedWriter{}
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving (http://\S+)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("agent mcp --http did not say where it listens:\n%s", stderr.String())
	}
	return url, stderr, cmd
}

type bearer struct {
	token string
	host  string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.host != "" {
		r.Host = b.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTP: streamable HTTP on loopback at /mcp with a bearer token;
// no token or a wrong one is 401, a non-loopback Host header (DNS
// rebinding) is 403, a non-loopback address is refused; a generated token
// is kept in $AGENT_HOME/state and printed once.
func TestHTTP(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	url, _ := httpServer(t, home, "--token", "s3cret")
	if !strings.HasSuffix(url, "/mcp") {
		t.Errorf("url %s", url)
	}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "s3cret"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil || res.IsError {
		t.Fatalf("echo over http: %v %+v", err, res)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name string
		rt   bearer
		want int
	}{
		{"no token", bearer{}, http.StatusUnauthorized},
		{"wrong token", bearer{token: "guess"}, http.StatusUnauthorized},
		{"rebinding host", bearer{token: "s3cret", host: "evil.example:80"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := (&http.Client{Transport: tc.rt}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}

	t.Run("generated token", func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "home")
		_, stderr := httpServer(t, home)
		b, err := os.ReadFile(filepath.Join(home, "state", "mcp-token"))
		if err != nil {
			t.Fatal(err)
		}
		tok := strings.TrimSpace(string(b))
		if len(tok) != 64 || !strings.Contains(stderr.String(), tok) {
			t.Errorf("token %q not printed in %q", tok, stderr.String())
		}
		_, stderr2 := httpServer(t, home)
		if strings.Contains(stderr2.String(), tok) {
			t.Error("the kept token was printed again")
		}
	})

	t.Run("not loopback", func(t *testing.T) {
		cmd := exec.Command(agentBin, "mcp", "--http", "0.0.0.0:0", "--token", "x")
		cmd.Env = env(t.TempDir())
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "loopback") {
			t.Errorf("0.0.0.0 was accepted: %v %s", err, out)
		}
	})
}

// TestHTTPSessionClosedCancels: a client that ends its HTTP session
// (DELETE /mcp) while a call runs cancels that plugin call.
func TestHTTPSessionClosedCancels(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	url, _ := httpServer(t, home, "--token", "t0k")
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "t0k"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Start the plugin first: the slow call must be running in it, not
	// waiting for a cold start (a sandboxed start through the shim takes
	// longer on a loaded machine), when the session ends.
	if res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "warm"}}); err != nil || res.IsError {
		t.Fatalf("echo: %v %v", err, res)
	}
	mark := filepath.Join(t.TempDir(), "mark")
	go func() {
		_, _ = cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 60000, "mark": mark}})
	}()
	time.Sleep(700 * time.Millisecond)
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := (&http.Client{Transport: bearer{token: "t0k"}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("DELETE session: %s", resp.Status)
	}
	if !eventually(10*time.Second, func() bool { b, _ := os.ReadFile(mark); return string(b) == "canceled" }) {
		t.Error("closing the session did not cancel its plugin call")
	}
}
