//go:build unix

package workspace

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

// benchSkill writes an installed skill of n files of size bytes each
// (plus SKILL.md) and records its hash and per-file sums the way a check
// an hour after install would, so that the fingerprints are trusted.
func benchSkill(b *testing.B, home string, n, size int) *ActiveSkill {
	b.Helper()
	dir := filepath.Join(home, "skills", "bench")
	files := map[string]string{"SKILL.md": "---\nname: bench\ndescription: d\n---\nbody\n"}
	for i := range n {
		sub := "references"
		if i%2 == 0 {
			sub = "scripts"
		}
		files[fmt.Sprintf("%s/f%03d.py", sub, i)] = strings.Repeat("x", size)
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h1, _, err := registry.HashSkill(dir)
	if err != nil {
		b.Fatal(err)
	}
	e := registry.Entry{Name: "bench", Canonical: "bench", Trusted: true, Path: dir, Origin: registry.Origin{Source: registry.SourceGit}, Integrity: registry.Integrity{DirHash: h1}}
	later := registry.NewStore(home)
	later.Now = func() time.Time { return time.Now().Add(time.Hour) }
	if err := later.CheckIntegrity(e); err != nil {
		b.Fatal(err)
	}
	return &ActiveSkill{Entry: &e, Manifest: &manifest.Manifest{Name: "bench"}}
}

// cpuTime is the CPU time (user and system) this process and its waited-for
// children used so far.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// reportCPU adds cpu-ns/op: on this shared machine the wall time includes
// waiting for a core, the CPU time much less so.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFirstUseCheck is the cost of the whole-skill check before a
// script run or a plugin launch (SPEC §5): "cached" is the fingerprint
// path that every use takes when nothing changed (a walk and a stat per
// file), "full" re-hashes every file, as 'agent skill verify' does.
//
// "python3-start" is what the check precedes at the least: starting
// python3 on an empty script, for the ratio in docs/benchmarks.md.
func BenchmarkFirstUseCheck(b *testing.B) {
	b.Run("python3-start", func(b *testing.B) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			b.Skip("no python3")
		}
		start := cpuTime()
		for b.Loop() {
			if err := osexec.Command(py, "-c", "pass").Run(); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
	for _, sz := range []struct{ files, size int }{{20, 4 << 10}, {200, 25 << 10}} {
		b.Run(fmt.Sprintf("files=%d/size=%dKiB/cached", sz.files, sz.size>>10), func(b *testing.B) {
			home := b.TempDir()
			as := benchSkill(b, home, sz.files, sz.size)
			ws := &Workspace{Config: Config{Home: home}}
			start := cpuTime()
			for b.Loop() {
				if err := ws.checkSkill(as, true); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
		b.Run(fmt.Sprintf("files=%d/size=%dKiB/full", sz.files, sz.size>>10), func(b *testing.B) {
			home := b.TempDir()
			as := benchSkill(b, home, sz.files, sz.size)
			s := registry.NewStore(home)
			start := cpuTime()
			for b.Loop() {
				if c, _, err := s.Verify(*as.Entry, true); err != nil || !c.Empty() {
					b.Fatal(c, err)
				}
			}
			reportCPU(b, start)
		})
	}
}
