//go:build linux && !portable

package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/internal/sandbox"
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
