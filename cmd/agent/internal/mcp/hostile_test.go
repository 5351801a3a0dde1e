//go:build unix

package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func post(t *testing.T, url string, body io.Reader, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// peakRSS is the high-water mark of pid's resident memory (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// zeros streams n bytes of a JSON request that never ends in time: the
// test never holds it in memory.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.n {
		p = p[:z.n]
	}
	for i := range p {
		p[i] = '0'
	}
	z.n -= int64(len(p))
	return len(p), nil
}

// TestHTTPHostileRequests: over HTTP a foreign Origin is 403 even with
// the token; 401 says "WWW-Authenticate: Bearer"; a 200 MB body with a
// valid token is refused while it is read, and the server's memory stays
// bounded (SPEC §13).
func TestHTTPHostileRequests(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	url, _, cmd := startHTTP(t, home, "--token", "s3cret")
	auth := map[string]string{"Authorization": "Bearer s3cret"}

	t.Run("origin", func(t *testing.T) {
		for _, tc := range []struct {
			origin string
			want   int
		}{
			{"https://evil.example", http.StatusForbidden},
			{"http://127.0.0.1.evil.example", http.StatusForbidden},
			{"null", http.StatusForbidden},
			{"http://localhost:6274", http.StatusOK},
			{"http://127.0.0.1:8080", http.StatusOK},
			{"http://[::1]:3000", http.StatusOK},
		} {
			h := map[string]string{"Authorization": "Bearer s3cret", "Origin": tc.origin}
			if resp := post(t, url, strings.NewReader(initializeBody), h); resp.StatusCode != tc.want {
				t.Errorf("Origin %s: status %d, want %d", tc.origin, resp.StatusCode, tc.want)
			}
		}
	})

	t.Run("WWW-Authenticate", func(t *testing.T) {
		for name, h := range map[string]map[string]string{
			"no token":    nil,
			"wrong token": {"Authorization": "Bearer guess"},
			"basic":       {"Authorization": "Basic czNjcmV0"},
		} {
			resp := post(t, url, strings.NewReader(initializeBody), h)
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: status %d, WWW-Authenticate %q; want 401 with a Bearer challenge", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
		if resp := post(t, url, strings.NewReader(initializeBody), auth); resp.StatusCode != http.StatusOK {
			t.Errorf("the right token: status %d", resp.StatusCode)
		}
	})

	t.Run("1 GiB body", func(t *testing.T) {
		before := peakRSS(t, cmd.Process.Pid)
		// 1 GiB: far above what the cap, io.ReadAll's doubling and a lazy
		// GC (the race detector's shadow memory too) can add, so buffering
		// the body and capping it cannot be confused.
		const size = 1 << 30
		body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"`), &zeros{n: size})
		req, _ := http.NewRequest("POST", url, body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret")
		req.ContentLength = -1 // chunked: no length to refuse it by
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", resp.StatusCode)
			}
		} // else the server closed the connection while the body was sent: refused too
		after := peakRSS(t, cmd.Process.Pid)
		t.Logf("server peak RSS %d MB before, %d MB after a 1 GiB body", before>>20, after>>20)
		if grew := after - before; grew > 256<<20 {
			t.Errorf("a 1 GiB body grew the server's peak RSS by %d MB (from %d MB); the body must be capped while it is read", grew>>20, before>>20)
		}
		if resp := post(t, url, strings.NewReader(initializeBody), auth); resp.StatusCode != http.StatusOK {
			t.Errorf("after the big body: status %d", resp.StatusCode)
		}
	})
}

// TestHTTPBindRefusedWritesNothing: when the address is taken, `agent mcp
// --http` fails and leaves no generated token behind.
func TestHTTPBindRefusedWritesNothing(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	home := filepath.Join(t.TempDir(), "home")
	cmd := exec.Command(agentBin, "mcp", "--http", ln.Addr().String())
	cmd.Env = env(home)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("agent mcp --http on a taken address succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "address already in use") {
		t.Errorf("the error does not say why:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "state", "mcp-token")); !os.IsNotExist(err) {
		t.Errorf("a token file was written although the bind failed (%v)", err)
	}
	if strings.Contains(string(out), "generated a bearer token") {
		t.Errorf("a token was announced although the bind failed:\n%s", out)
	}
}

// TestStdioEOFDrains: a client that writes its requests and closes stdin
// at once (a shell pipe) gets every answer before the server exits.
func TestStdioEOFDrains(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	var in bytes.Buffer
	in.WriteString(initializeBody + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 8
	for i := range calls {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"}}}`+"\n", 10+i, i)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}` + "\n")
	cmd := exec.Command(agentBin, "mcp")
	cmd.Env = env(home)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agent mcp: %v\n%s", err, stderr.String())
	}
	got := map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
			if len(m.Result) == 0 || bytes.Contains(m.Result, []byte(`"isError":true`)) {
				t.Errorf("answer %d is an error: %s", *m.ID, sc.Bytes())
			}
			got[*m.ID] = true
		}
	}
	for _, id := range append([]int{1, 99}, func() []int {
		var ids []int
		for i := range calls {
			ids = append(ids, 10+i)
		}
		return ids
	}()...) {
		if !got[id] {
			t.Errorf("no answer to request %d before exit", id)
		}
	}
	t.Logf("%d answers in %s", len(got), time.Since(start).Round(time.Millisecond))
}
