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
	url := gittest.NewRepo(b, files).FileURL()
	add := func(audit bool) time.Duration {
		auditOnAdd = audit
		defer func() { auditOnAdd = true }()
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
