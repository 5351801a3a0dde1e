//go:build unix

package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/agentskills/agent/sdk"
)

// The two cold-start rows of SPEC §11, each as a ratio to a bare go-plugin
// start of the same binary with no check at all, alternated in one loop so
// that both see the same machine load. Both time launch, handshake, dial
// and one echo call; neither times the stop.

// bareStart starts path through go-plugin with a plain exec.Cmd and makes
// one call: what a host with no integrity check, no sealed copy and no
// containment would do.
func bareStart(b *testing.B, path string) *plugin.Client {
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.PluginSets(nil),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		Logger:           hclog.NewNullLogger(),
		Cmd:              exec.Command(path),
	})
	rpc, err := c.Client()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := raw.(sdk.Skill).Invoke(context.Background(), "echo", benchArgs); err != nil {
		b.Fatal(err)
	}
	return c
}

// ratioMetrics reports the medians of both series, the ratio of the
// medians, and the median of the per-iteration ratios: each pair ran back
// to back under the same load, so on a busy machine that one is the
// steadier (the SPEC's targets are on medians; ns/op is a mean).
func ratioMetrics(b *testing.B, ours, bare []time.Duration) {
	pairs := make([]float64, len(ours))
	for i := range ours {
		pairs[i] = float64(ours[i]) / float64(bare[i])
	}
	slices.Sort(pairs)
	slices.Sort(ours)
	slices.Sort(bare)
	mo, mb := ours[len(ours)/2], bare[len(bare)/2]
	b.ReportMetric(float64(mo.Nanoseconds()), "median-ns")
	b.ReportMetric(float64(mb.Nanoseconds()), "bare-median-ns")
	b.ReportMetric(float64(mo)/float64(mb), "x-bare")
	b.ReportMetric(pairs[len(pairs)/2], "x-bare-paired")
}

// BenchmarkColdStartLongLived: a long-lived host (agent mcp, agent run)
// restarting a plugin from the sealed copy it made at the first start.
func BenchmarkColdStartLongLived(b *testing.B) {
	h := New(WithLogger(hclog.NewNullLogger()))
	defer h.Close()
	h.Register(tp())
	if _, err := h.Invoke(context.Background(), "tp", "echo", benchArgs); err != nil {
		b.Fatal(err)
	}
	ours := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		h.mu.RLock()
		pr := h.procs["tp"]
		h.mu.RUnlock()
		if inst := pr.cur.Swap(nil); inst != nil {
			h.retire(inst, true)
		}
		h.bg.Wait()
		b.StartTimer()
		t0 := time.Now()
		if _, err := h.Invoke(context.Background(), "tp", "echo", benchArgs); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		t1 := time.Now()
		c := bareStart(b, testPlugin)
		bare = append(bare, time.Since(t1))
		b.StopTimer()
		c.Kill()
		b.StartTimer()
	}
	b.StopTimer()
	ratioMetrics(b, ours, bare)
}

// BenchmarkColdStartOneShot20MB: `agent call` with a 20 MB plugin: a fresh
// host, the integrity check (fingerprint recorded by an earlier run, as
// after install), the sealed copy and the launch. The plugin is the test
// plugin padded to 20 MB (bytes after the ELF image, which exec never
// reads, so the bare start pays nothing for them while we copy them all:
// the ratio errs against us).
func BenchmarkColdStartOneShot20MB(b *testing.B) {
	const size = 20 << 20
	body, err := os.ReadFile(testPlugin)
	if err != nil {
		b.Fatal(err)
	}
	if len(body) < size {
		body = append(body, make([]byte, size-len(body))...)
	}
	path := filepath.Join(b.TempDir(), "plugin20mb")
	if err := os.WriteFile(path, body, 0o755); err != nil {
		b.Fatal(err)
	}
	p := Plugin{Name: "big", Path: path, SHA256: fileSHA(b, path)}
	state := b.TempDir()
	// Record a settled fingerprint, as a run long after install would.
	time.Sleep(fingerprintSettle + 100*time.Millisecond)
	warm := New(WithLogger(hclog.NewNullLogger()), WithStateDir(state))
	warm.Register(p)
	if _, err := warm.Invoke(context.Background(), "big", "echo", benchArgs); err != nil {
		b.Fatal(err)
	}
	_ = warm.Close()
	ours := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	var hashes int64
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		h := New(WithLogger(hclog.NewNullLogger()), WithStateDir(state))
		h.Register(p)
		if _, err := h.Invoke(context.Background(), "big", "echo", benchArgs); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		t1 := time.Now()
		c := bareStart(b, path)
		bare = append(bare, time.Since(t1))
		b.StopTimer()
		hashes += h.verifier.hashes.Load()
		_ = h.Close()
		c.Kill()
		b.StartTimer()
	}
	b.StopTimer()
	ratioMetrics(b, ours, bare)
	b.ReportMetric(float64(hashes)/float64(b.N), "full-hashes/op")
}
