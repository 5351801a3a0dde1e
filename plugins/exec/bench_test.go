//go:build unix

package exec

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkScriptRunOverhead runs one trivial script directly (os/exec)
// and through New(cfg).Invoke("script_run") via the python3 fallback,
// alternating the two in each iteration so that both see the same machine
// load. It reports the median of each and the median of the per-iteration
// difference (SPEC §11: overhead ≤ 5 ms).
//
// "python3" uses the real interpreter. Its start-up (tens of ms, more on a
// loaded machine) dwarfs the overhead and adds noise, so "stub" repeats the
// measurement with a tiny Go program standing in for python3 that prints the
// JSON and exits: the difference is then the plugin's own cost.
func BenchmarkScriptRunOverhead(b *testing.B) {
	b.Run("python3", func(b *testing.B) { benchOverhead(b, requirePython(b)) })
	b.Run("stub", func(b *testing.B) {
		dir := b.TempDir()
		src := filepath.Join(dir, "main.go")
		if err := os.WriteFile(src, []byte(stubSrc), 0o644); err != nil {
			b.Fatal(err)
		}
		stub := filepath.Join(dir, "python3")
		cmd := osexec.Command("go", "build", "-o", stub, src)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build the stub: %v\n%s", err, out)
		}
		benchOverhead(b, stub)
	})
}

// stubSrc stands in for python3 in the "stub" benchmark.
const stubSrc = `package main

import "os"

func main() { os.Stdout.WriteString("{\"ok\": true}\n") }
`

func benchOverhead(b *testing.B, py string) {
	tb := newTestbed(b, map[string]string{"ok.py": "print('{\"ok\": true}')\n"}, serviceOption(func(tb *testbed) {
		tb.svc.run.lookPath = func(name string) (string, error) {
			if name == "python3" {
				return py, nil
			}
			return "", osexec.ErrNotFound
		}
	}))
	script := filepath.Join(tb.dir, "scripts", "ok.py")
	args, _ := json.Marshal(map[string]any{"skill_name": "my-skill", "script_name": "ok"})
	ctx := context.Background()
	direct := func() {
		cmd := osexec.Command(py, script, "--json")
		cmd.Dir = filepath.Dir(script)
		cmd.Env = tb.parent[:4]
		out, err := cmd.Output()
		if err != nil || !json.Valid(out) {
			b.Fatalf("direct run: %v %q", err, out)
		}
	}
	viaTool := func() {
		if _, err := tb.skill.Invoke(ctx, "script_run", args); err != nil {
			b.Fatalf("script_run: %v", err)
		}
	}
	direct()
	viaTool()
	var d, s, diff []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		viaTool()
		t2 := time.Now()
		d, s, diff = append(d, t1.Sub(t0)), append(s, t2.Sub(t1)), append(diff, t2.Sub(t1)-t1.Sub(t0))
	}
	b.StopTimer()
	median := func(v []time.Duration) float64 {
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(median(d), "direct-ms")
	b.ReportMetric(median(s), "script_run-ms")
	b.ReportMetric(median(diff), "overhead-ms")
}

// BenchmarkScriptSandbox runs the same script through script_run with the
// sandbox (Landlock, a network namespace, a per-call TMPDIR, a cgroup)
// and without (Config.NoSandbox), alternating in each iteration, and
// reports the medians and their ratio (SPEC §11: ≤ 1.1×). "python3" is
// the real interpreter; "stub" a tiny Go program standing in for it, so
// that the sandbox's own cost is not hidden in python's start-up.
func BenchmarkScriptSandbox(b *testing.B) {
	b.Run("python3", func(b *testing.B) { benchSandbox(b, requirePython(b)) })
	b.Run("stub", func(b *testing.B) {
		dir := b.TempDir()
		src := filepath.Join(dir, "main.go")
		if err := os.WriteFile(src, []byte(stubSrc), 0o644); err != nil {
			b.Fatal(err)
		}
		stub := filepath.Join(dir, "python3")
		cmd := osexec.Command("go", "build", "-o", stub, src)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build the stub: %v\n%s", err, out)
		}
		benchSandbox(b, stub)
	})
}

func benchSandbox(b *testing.B, py string) {
	look := serviceOption(func(tb *testbed) {
		tb.svc.run.lookPath = func(name string) (string, error) {
			if name == "python3" {
				return py, nil
			}
			return "", osexec.ErrNotFound
		}
	})
	files := map[string]string{"ok.py": "print('{\"ok\": true}')\n"}
	on := newTestbed(b, files, look, configOption(func(c *Config) { c.NoSandbox = false }))
	off := newTestbed(b, files, look, configOption(func(c *Config) { c.NoSandbox = true }))
	args, _ := json.Marshal(map[string]any{"skill_name": "my-skill", "script_name": "ok"})
	ctx := context.Background()
	call := func(tb *testbed) time.Duration {
		t0 := time.Now()
		if _, err := tb.skill.Invoke(ctx, "script_run", args); err != nil {
			b.Fatalf("script_run: %v", err)
		}
		return time.Since(t0)
	}
	call(on)
	call(off)
	var son, soff []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		son = append(son, call(on))
		soff = append(soff, call(off))
	}
	b.StopTimer()
	median := func(v []time.Duration) float64 {
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	mon, moff := median(son), median(soff)
	b.ReportMetric(mon, "sandbox-ms")
	b.ReportMetric(moff, "nosandbox-ms")
	b.ReportMetric(mon/moff, "ratio")
}

// BenchmarkScriptBytecode runs a script that imports json and argparse
// through script_run three ways, alternating in each iteration: "farm",
// the bytecode folder of links to the interpreter's own __pycache__
// (bytecode.go); "empty", an empty PYTHONPYCACHEPREFIX, which is what
// every run got before (the per-skill folder stayed empty under
// PYTHONDONTWRITEBYTECODE=1) and what a per-run prefix gives; and
// "direct", python3 started by os/exec without the plugin. Sandboxed
// as scripts run. It reports each median and farm/empty, farm/direct.
func BenchmarkScriptBytecode(b *testing.B) {
	py := requirePython(b)
	files := map[string]string{"imp.py": "import json, argparse\nprint(json.dumps({'ok': True}))\n"}
	cache := filepath.Join(b.TempDir(), "state", "exec")
	bed := func(farm bool) *testbed {
		return newTestbed(b, files, configOption(func(c *Config) { c.NoSandbox, c.CacheDir = false, cache }),
			serviceOption(func(tb *testbed) {
				if !farm {
					tb.svc.bytecode = func(string, pyInfo) string { return "" }
				}
			}))
	}
	farm, empty := bed(true), bed(false)
	args, _ := json.Marshal(map[string]any{"skill_name": "my-skill", "script_name": "imp"})
	ctx := context.Background()
	call := func(tb *testbed) time.Duration {
		t0 := time.Now()
		if _, err := tb.skill.Invoke(ctx, "script_run", args); err != nil {
			b.Fatalf("script_run: %v", err)
		}
		return time.Since(t0)
	}
	direct := func() time.Duration {
		t0 := time.Now()
		cmd := osexec.Command(py, filepath.Join(farm.dir, "scripts", "imp.py"))
		cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
		if out, err := cmd.Output(); err != nil || !json.Valid(out) {
			b.Fatalf("direct run: %v %q", err, out)
		}
		return time.Since(t0)
	}
	call(farm)
	call(empty)
	var f, e, d []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, e, d = append(f, call(farm)), append(e, call(empty)), append(d, direct())
	}
	b.StopTimer()
	median := func(v []time.Duration) float64 {
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	mf, me, md := median(f), median(e), median(d)
	b.ReportMetric(mf, "farm-ms")
	b.ReportMetric(me, "empty-ms")
	b.ReportMetric(md, "direct-ms")
	b.ReportMetric(mf/me, "farm/empty")
	b.ReportMetric(mf/md, "farm/direct")
}
