//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// BenchmarkAddAudit compares, in one run, `agent skill add --yes` of the
// example skill (examples/skills/hello-extended, committed to a file://
// repository) with the audit that add runs before it asks, and without it
// (issue 39: ≤ 1.1×). --yes installs files only: no plugin build, which
// would hide the audit's cost in seconds of go build. Each add goes into
// a fresh AGENT_HOME; the two alternate so that the machine's load falls
// on both alike.
func BenchmarkAddAudit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	url := exampleRepo(b)
	add := func(audit bool) time.Duration {
		if !audit {
			auditOnAdd = "off"
		}
		defer func() { auditOnAdd = "on" }()
		tmp := b.TempDir()
		start := time.Now()
		_, errOut, code := runInProcess(b, map[string]string{"AGENT_HOME": filepath.Join(tmp, "home"), "HOME": tmp, "PATH": os.Getenv("PATH")},
			"skill", "add", url, "--yes")
		d := time.Since(start)
		if code != 0 {
			b.Fatalf("add: %s", errOut)
		}
		return d
	}
	var with, without []time.Duration
	for b.Loop() {
		with = append(with, add(true))
		without = append(without, add(false))
	}
	mw, mo := median(with), median(without)
	b.ReportMetric(float64(mw.Microseconds())/1000, "ms-with-audit")
	b.ReportMetric(float64(mo.Microseconds())/1000, "ms-without")
	b.ReportMetric(float64(mw)/float64(mo), "x-without")
}

// BenchmarkAddAuditCLI is BenchmarkAddAudit as a user meets it: `agent
// skill add --yes` as a new process, from the same commit linked twice,
// once with the audit switched off (-X ...cli.auditOnAdd=off), alternating
// into a fresh AGENT_HOME each; the median of the pairs' ratios.
func BenchmarkAddAuditCLI(b *testing.B) {
	url := exampleRepo(b)
	with := agentBinary(b)
	without := filepath.Join(b.TempDir(), "agent-noaudit")
	build := exec.Command("go", "build", "-ldflags=-X=github.com/agentskills/agent/cmd/agent/internal/cli.auditOnAdd=off", "-o", without, "github.com/agentskills/agent/cmd/agent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	add := func(agent string) time.Duration {
		tmp := b.TempDir()
		d, _ := runAgent(b, agent, []string{"AGENT_HOME=" + filepath.Join(tmp, "home"), "HOME=" + tmp, "PATH=" + os.Getenv("PATH")},
			"skill", "add", url, "--yes")
		return d
	}
	var ratios, ws, wos []time.Duration
	for i := 0; b.Loop(); i++ {
		var w, wo time.Duration
		if i%2 == 0 {
			w, wo = add(with), add(without)
		} else {
			wo, w = add(without), add(with)
		}
		ws, wos = append(ws, w), append(wos, wo)
		// A ratio as a Duration in thousandths, so that median sorts it.
		ratios = append(ratios, time.Duration(1000*float64(w)/float64(wo)))
	}
	b.ReportMetric(float64(median(ws).Microseconds())/1000, "ms-with-audit")
	b.ReportMetric(float64(median(wos).Microseconds())/1000, "ms-without")
	b.ReportMetric(float64(median(ratios))/1000, "x-without")
}

// exampleRepo commits the example skill's tracked files to a file://
// repository and returns its URL.
func exampleRepo(b *testing.B) string {
	b.Helper()
	// The tracked files only: a build left in the folder (an ignored
	// plugin.exe of 21 MB once) made every add of this benchmark 250 ms.
	root := filepath.Join("..", "..", "..", "..", "examples", "skills", "hello-extended")
	list, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{}
	for _, rel := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			b.Fatal(err)
		}
		files[rel] = string(data)
	}
	return gittest.NewRepo(b, files).FileURL()
}
