//go:build linux && !portable

package exec

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/internal/testutil/probe"
)

func TestScriptSandbox(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 || !st.NetNS {
		t.Skipf("sandbox incomplete here: %v", st.Lines())
	}
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "id_ed25519")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	srv, err := probe.Serve(filepath.Join(outside, "s.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	args := []string{"read=" + secret, "list=" + secretDir, "write=" + filepath.Join(outside, "f"), "tmp=", "tcp=" + srv.Addr("tcp"), "unix=" + srv.Addr("unix")}
	// A pathname Unix socket outside the folder: Landlock ABI 9 or the
	// seccomp filter (no AF_UNIX socket for a script) denies it.
	unixWant := "allowed"
	if st.UnixPath || st.Seccomp {
		unixWant = "denied"
	}
	tests := []struct {
		name string
		mod  func(*Skill)
		want map[string]string
		unix int64 // connections the Unix socket's server counts
	}{
		{"undeclared", func(*Skill) {}, map[string]string{
			args[0]: "denied", args[1]: "denied", args[2]: "denied", args[3]: "allowed", args[4]: "denied", args[5]: unixWant,
		}, map[string]int64{"allowed": 1, "denied": 0}[unixWant]},
		{"declared", func(s *Skill) {
			s.FSRead = []string{secretDir}
			s.FSWrite = []string{outside}
			s.Network = []string{"*"}
		}, map[string]string{
			args[0]: "allowed", args[1]: "allowed", args[2]: "allowed", args[3]: "allowed", args[4]: "allowed", args[5]: "allowed",
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Hits("unix")
			tb := newTestbed(t, map[string]string{"probe.py": probe.Python}, withSkill(tc.mod), configOption(func(c *Config) { c.NoSandbox = false }))
			res, e := tb.run(map[string]any{"script_name": "probe", "args": args})
			if e != nil {
				t.Fatalf("script_run: %v", e)
			}
			var got map[string]string
			if err := json.Unmarshal(res.Value, &got); err != nil {
				t.Fatalf("%s: %v", res.Value, err)
			}
			for k, want := range tc.want {
				if g := got[k]; len(g) < len(want) || g[:len(want)] != want {
					t.Errorf("%s: %s, want %s", k, g, want)
				}
			}
			if n := srv.Hits("unix") - before; n != tc.unix {
				t.Errorf("the Unix socket's server counted %d connections, want %d", n, tc.unix)
			}
		})
	}
}

// fetchPy fetches each URL it is given with urllib, which finds the
// proxy in HTTPS_PROXY / HTTP_PROXY as any Python program does, and
// tries a direct connect to each addr=host:port.
const fetchPy = `import json, socket, ssl, sys, urllib.request
out = {}
ctx = ssl._create_unverified_context()
for arg in sys.argv[1:]:
    if arg == "--json":
        continue
    try:
        if arg.startswith("addr="):
            h, p = arg[5:].rsplit(":", 1)
            socket.create_connection((h, int(p)), timeout=5).close()
            out[arg] = "allowed"
        else:
            req = urllib.request.Request(arg, headers={"X-Probe": "sandboxed"})
            with urllib.request.urlopen(req, timeout=20, context=ctx) as r:
                out[arg] = "allowed: " + r.read().decode().strip()
    except Exception as e:
        out[arg] = "denied: " + type(e).__name__ + ": " + str(e)
print(json.dumps(out))
`

// TestScriptProxy: a real python3 script whose SKILL.md declares a
// host:port reaches it through the sandbox's proxy (a CONNECT tunnel
// for https, a forwarded request for http), and nothing else: another
// port gets the proxy's 403 and a direct connect finds nobody (the
// namespace holds only its own loopback).
func TestScriptProxy(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 || !st.NetNS {
		t.Skipf("sandbox incomplete here: %v", st.Lines())
	}
	var hits atomic.Int32
	seen := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Probe") == "sandboxed" {
			hits.Add(1)
		}
		fmt.Fprintln(w, "hello from the host")
	}
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(seen))
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(seen))
	defer plain.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the undeclared server got %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	args := []string{tlsSrv.URL + "/", plain.URL + "/", other.URL + "/", "https://" + strings.TrimPrefix(other.URL, "http://") + "/", "addr=" + tlsAddr}
	tb := newTestbed(t, map[string]string{"fetch.py": fetchPy},
		withSkill(func(s *Skill) { s.Network = []string{tlsAddr, plainAddr} }),
		configOption(func(c *Config) { c.NoSandbox = false }))
	res, e := tb.run(map[string]any{"script_name": "fetch", "args": args})
	if e != nil {
		t.Fatalf("script_run: %v", e)
	}
	var got map[string]string
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("%s: %v", res.Value, err)
	}
	want := map[string]string{
		args[0]: "allowed: hello from the host",
		args[1]: "allowed: hello from the host",
		args[2]: "denied: HTTPError: HTTP Error 403",
		args[3]: "denied: URLError: <urlopen error Tunnel connection failed: 403",
		args[4]: "denied: ConnectionRefusedError",
	}
	for k, w := range want {
		if !strings.HasPrefix(got[k], w) {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	t.Logf("%v", got)
	if n := hits.Load(); n != 2 {
		t.Errorf("the declared servers saw %d requests from the script, want 2", n)
	}
}
