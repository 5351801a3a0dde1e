//go:build linux && !portable

package sandbox

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShimError: a failed exec reads as os/exec's; the shim's other
// failures are the sandbox's, and match no errno (the plugin runner
// takes EPERM for a refused PTRACE_TRACEME).
func TestShimError(t *testing.T) {
	t.Parallel()
	err := shimError("exec\x0026\x00text file busy", "/bin/x")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "fork/exec" || pe.Path != "/bin/x" || !errors.Is(err, syscall.ETXTBSY) {
		t.Errorf("exec: %v, want fork/exec /bin/x: ETXTBSY", err)
	}
	err = shimError("landlock\x001\x00sandbox: landlock_restrict_self: operation not permitted", "/bin/x")
	if errors.Is(err, syscall.EPERM) || err.Error() != "sandbox shim: landlock: sandbox: landlock_restrict_self: operation not permitted" {
		t.Errorf("landlock: %v", err)
	}
}

// BenchmarkShim: an unprivileged sandboxed start of a small program
// (the test binary reading a file) to its exit, with a declared host
// (through the shim: this binary again, the loopback, the proxy's
// listener) and without (cloned straight into its namespaces),
// alternating in one run; medians and their ratio. As root it runs
// itself as nobody (setpriv) and reports that run's figures.
func BenchmarkShim(b *testing.B) {
	s := Probe()
	if s.ABI == 0 || !s.NetNS {
		b.Skip("no Landlock or network namespace here")
	}
	bin, binDir := self(b)
	if os.Getuid() == 0 {
		relayAsNobody(b, bin, "BenchmarkShim")
		return
	}
	p := Policy{Read: append([]string{binDir}, SystemLibs...)}
	declared := p
	declared.Network = []string{"127.0.0.1:9"}
	ms, md := alternate(b, func() { startHelper(b, bin, declared) }, func() { startHelper(b, bin, p) })
	b.ReportMetric(ms, "shim-ms")
	b.ReportMetric(md, "direct-ms")
	b.ReportMetric(ms/md, "ratio")
}

// startHelper starts the test binary's read helper under p and waits
// for it.
func startHelper(b *testing.B, bin string, p Policy) {
	cmd := exec.Command(bin, bin)
	cmd.Env = helperEnv("SANDBOX_HELPER=read")
	release, err := Start(cmd, p, (*exec.Cmd).Start)
	if err != nil {
		b.Fatal(err)
	}
	err = cmd.Wait()
	release()
	if err != nil {
		b.Fatal(err)
	}
}

// alternate runs x and y in turn, once each to warm up and then b.N
// times, and returns the median milliseconds of each: both see the same
// load.
func alternate(b *testing.B, x, y func()) (mx, my float64) {
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0)
	}
	x()
	y()
	var xs, ys []time.Duration
	b.ResetTimer()
	for range b.N {
		xs = append(xs, timed(x))
		ys = append(ys, timed(y))
	}
	b.StopTimer()
	median := func(v []time.Duration) float64 {
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	return median(xs), median(ys)
}

// relayAsNobody runs benchmark name of bin as nobody and reports its
// metrics as this benchmark's.
func relayAsNobody(b *testing.B, bin, name string) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		b.Skip("setpriv (util-linux) not installed: run this benchmark as an unprivileged user")
	}
	args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		bin, "-test.run=^$", "-test.bench=^" + name + "$", "-test.count=1"}
	if f := flag.Lookup("test.benchtime"); f != nil {
		args = append(args, "-test.benchtime="+f.Value.String())
	}
	cmd := exec.Command(setpriv, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/nonexistent"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], name) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil && f[i+1] != "ns/op" {
				b.ReportMetric(v, f[i+1])
			}
		}
		return
	}
	b.Fatalf("as nobody: no %s line in\n%s", name, out)
}
