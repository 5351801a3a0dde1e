//go:build linux && !portable

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/internal/testutil/probe"
)

// TestPluginSandbox: a skill plugin runs confined to what its SKILL.md
// declares (SPEC §8): undeclared, it reads no secret, writes nothing
// outside its temp folder and reaches nothing of the host's network (TCP,
// MPTCP, UDP, a Unix socket outside its folder where the kernel scopes
// them); declared, each of those works. A restart (from the sealed copy)
// is confined the same way.
func TestPluginSandbox(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 {
		t.Skip("the kernel has no Landlock")
	}
	if !st.NetNS {
		t.Skip("no network namespace can be made here")
	}
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	sock := filepath.Join(outside, "s.sock")
	srv, err := probe.Serve(sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	h := newHost(t)
	undeclared := tp()
	undeclared.Name, undeclared.Sandbox = "undeclared", &sandbox.Policy{}
	declared := tp()
	declared.Name, declared.Sandbox = "declared", &sandbox.Policy{Read: []string{secret}, Write: []string{outside}, Network: []string{"*"}}
	h.Register(undeclared)
	h.Register(declared)

	tests := []struct {
		name    string
		op, arg string
		plugin  string
		want    bool
	}{
		{"read a secret", "read", secret, "undeclared", false},
		{"read a declared file", "read", secret, "declared", true},
		{"write its temp folder", "tmp", "", "undeclared", true},
		{"write outside", "write", filepath.Join(outside, "f"), "undeclared", false},
		{"write a declared folder", "write", filepath.Join(outside, "f"), "declared", true},
		{"tcp to the host's loopback", "tcp", srv.Addr("tcp"), "undeclared", false},
		{"tcp with network *", "tcp", srv.Addr("tcp"), "declared", true},
		{"mptcp to the host's loopback", "mptcp", srv.Addr("mptcp"), "undeclared", false},
		{"mptcp with network *", "mptcp", srv.Addr("mptcp"), "declared", true},
		{"udp to the host's loopback", "udp", srv.Addr("udp"), "undeclared", false},
		{"udp with network *", "udp", srv.Addr("udp"), "declared", true},
		// A plugin serves on a Unix socket, so the seccomp filter takes
		// connect(2) from it rather than its AF_UNIX sockets.
		{"its own loopback", "loopback", "", "undeclared", !st.UserNS && !st.Seccomp},
		{"a unix socket outside, declared", "unix", sock, "declared", true},
	}
	if st.UnixPath || st.Seccomp {
		tests = append(tests, struct {
			name    string
			op, arg string
			plugin  string
			want    bool
		}{"a unix socket outside", "unix", sock, "undeclared", false})
	}
	probe := func(t *testing.T, plugin, op, arg string) string {
		t.Helper()
		return probeTool(t, h, plugin, op, arg)
	}
	for _, restart := range []bool{false, true} {
		if restart {
			// Both crash; the next call restarts them from their sealed
			// copies, in the sandbox again.
			for _, p := range []string{"undeclared", "declared"} {
				_, _ = h.Invoke(context.Background(), p, "exit", json.RawMessage(`{"code":3}`))
			}
		}
		for _, tc := range tests {
			name := tc.name
			if restart {
				name += " after a restart"
			}
			t.Run(name, func(t *testing.T) {
				got := probe(t, tc.plugin, tc.op, tc.arg)
				if (got == "allowed") != tc.want {
					t.Errorf("%s: %s, want allowed=%v", tc.plugin, got, tc.want)
				}
			})
		}
	}
	// The host itself was never restricted.
	if _, err := os.ReadFile(secret); err != nil {
		t.Fatalf("the host lost access: %v", err)
	}
	if strings.Contains(probe(t, "undeclared", "read", testPlugin), "denied") {
		t.Error("the plugin cannot read its own binary")
	}
}

// TestPluginProxy: a skill plugin that declares a host:port reaches it
// through the sandbox's proxy and nothing else, and its first start is
// still checked at exec on the plugin's own bytes: a record that does
// not match is refused with the plugin's real sha256 (not the shim's,
// which the unprivileged start executes first). As root the starting
// thread makes the plugin's namespace; TestPluginProxyUnprivileged runs
// this test again as nobody, where the shim does.
func TestPluginProxy(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 || !st.NetNS {
		t.Skipf("sandbox incomplete here: %v", st.Lines())
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the undeclared server got %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	declared := strings.TrimPrefix(srv.URL, "http://")
	plugin := func(name, sum string) Plugin {
		p := tp()
		p.Name, p.SHA256, p.Sandbox = name, sum, &sandbox.Policy{Network: []string{declared}}
		return p
	}
	h := newHost(t)
	h.Register(plugin("proxied", shaOnce()))
	if got := probeTool(t, h, "proxied", "proxy", declared); got != "allowed" || hits.Load() != 1 {
		t.Errorf("the declared host through the proxy: %s (the server saw %d requests)", got, hits.Load())
	}
	if got := probeTool(t, h, "proxied", "proxy", strings.TrimPrefix(other.URL, "http://")); !strings.Contains(got, "403") {
		t.Errorf("an undeclared host through the proxy: %s, want the proxy's 403", got)
	}
	if got := probeTool(t, h, "proxied", "tcp", declared); got == "allowed" {
		t.Error("the declared host was reached without the proxy")
	}
	if inst := h.procs["proxied"].cur.Load(); h.noTrace.Load() {
		t.Log("ptrace is refused here: the plugin ran from its sealed copy")
	} else if inst == nil || inst.how != "exec_stop" {
		t.Errorf("the plugin was not checked at exec: %+v", inst)
	}
	if n := h.verifier.hashes.Load(); n != 1 {
		t.Errorf("the check at exec hashed %d times, want 1", n)
	}
	// A restart runs the sealed copy (/proc/self/fd/N), behind the proxy
	// again.
	_, _ = h.Invoke(context.Background(), "proxied", "exit", json.RawMessage(`{"code":3}`))
	if got := probeTool(t, h, "proxied", "proxy", declared); got != "allowed" || hits.Load() != 2 {
		t.Errorf("after a restart, the declared host through the proxy: %s (the server saw %d requests)", got, hits.Load())
	}
	if inst := h.procs["proxied"].cur.Load(); inst == nil || inst.how != "sealed_copy" {
		t.Errorf("the restart did not run the sealed copy: %+v", inst)
	}

	wrong := newHost(t)
	wrong.Register(plugin("wrong", strings.Repeat("0", 64)))
	_, err := wrong.Invoke(context.Background(), "wrong", "echo", json.RawMessage(`{"text":"x"}`))
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "its sha256 is "+shaOnce()) {
		t.Errorf("a plugin whose record does not match: %v, want ErrTampered naming its sha256 %s", err, shaOnce())
	}
}

// TestPluginProxyUnprivileged runs TestPluginProxy as nobody (uid
// 65534), where the plugin starts through the sandbox's shim: a copy of
// this test binary and of the test plugin that nobody may run.
func TestPluginProxyUnprivileged(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 || !st.NetNS {
		t.Skipf("sandbox incomplete here: %v", st.Lines())
	}
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: TestPluginProxy is the test")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	dir, err := os.MkdirTemp("", "host-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp := func(src string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	bin, plugin := cp(os.Args[0]), cp(testPlugin)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		bin, "-test.run=^TestPluginProxy$", "-test.v")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/nonexistent", helperEnv + "=" + plugin}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil && bytes.Contains(out, []byte("sandbox incomplete here")) {
		// The kernel lets root make a network namespace but refuses
		// nobody a user namespace.
		t.Skipf("as nobody: %s", out)
	}
	if err != nil || bytes.Contains(out, []byte("--- SKIP")) || !bytes.Contains(out, []byte("--- PASS: TestPluginProxy")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// probeTool calls the test plugin's probe tool and returns its answer.
func probeTool(t *testing.T, h *Host, plugin, op, arg string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"op": op, "arg": arg})
	res, err := h.Invoke(context.Background(), plugin, "probe", args)
	if err != nil {
		t.Fatalf("%s probe %s: %v", plugin, op, err)
	}
	var out string
	if err := json.Unmarshal(res.Value, &out); err != nil {
		t.Fatalf("probe result %s: %v", res.Value, err)
	}
	return out
}

// BenchmarkPluginSandbox: a skill plugin with the sandbox on (Landlock,
// its own network namespace with loopback, its own TMPDIR) and off, in
// one loop so both see the same load. cold: a fresh host's first call
// (launch, check at exec, handshake, one echo), as `agent call` does;
// warm: one echo on a running plugin. Reported as medians and the ratio
// of the medians (docs/benchmarks.md; the target is ≤ 1.1×).
func BenchmarkPluginSandbox(b *testing.B) {
	if sandbox.Probe().ABI == 0 {
		b.Skip("the kernel has no Landlock")
	}
	off := tp()
	on := tp()
	on.Name, on.Sandbox = "on", &sandbox.Policy{}
	state := b.TempDir()
	call := func(h *Host, name string) time.Duration {
		t0 := time.Now()
		if _, err := h.Invoke(context.Background(), name, "echo", benchArgs); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.Run("cold", func(b *testing.B) {
		var tOn, tOff []time.Duration
		for range b.N {
			for _, p := range []Plugin{on, off} {
				h := New(WithLogger(hclog.NewNullLogger()), WithStateDir(state))
				h.Register(p)
				d := call(h, p.Name)
				b.StopTimer()
				_ = h.Close()
				b.StartTimer()
				if p.Sandbox != nil {
					tOn = append(tOn, d)
				} else {
					tOff = append(tOff, d)
				}
			}
		}
		sandboxMetrics(b, tOn, tOff)
	})
	b.Run("warm", func(b *testing.B) {
		h := New(WithLogger(hclog.NewNullLogger()), WithStateDir(state))
		defer h.Close()
		h.Register(on)
		h.Register(off)
		call(h, on.Name)
		call(h, off.Name)
		var tOn, tOff []time.Duration
		b.ResetTimer()
		for range b.N {
			tOn = append(tOn, call(h, on.Name))
			tOff = append(tOff, call(h, off.Name))
		}
		sandboxMetrics(b, tOn, tOff)
	})
}

func sandboxMetrics(b *testing.B, on, off []time.Duration) {
	slices.Sort(on)
	slices.Sort(off)
	mOn, mOff := on[len(on)/2], off[len(off)/2]
	b.ReportMetric(float64(mOn.Microseconds()), "on-median-µs")
	b.ReportMetric(float64(mOff.Microseconds()), "off-median-µs")
	b.ReportMetric(float64(mOn)/float64(mOff), "x-off")
}
