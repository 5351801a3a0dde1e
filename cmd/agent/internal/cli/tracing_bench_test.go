//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkVersionTracingOff runs `agent version` with tracing off (no
// OTEL_* set) and the same built with -tags notrace (no tracing set-up),
// alternately as new processes, and reports their medians and the ratio
// (SPEC §17: ≤ 1.02×).
func BenchmarkVersionTracingOff(b *testing.B) {
	agent := agentBinary(b)
	notrace := filepath.Join(b.TempDir(), "agent-notrace")
	build := exec.Command("go", "build", "-tags", "notrace", "-o", notrace, "github.com/agentskills/agent/cmd/agent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build -tags notrace: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	var offWall, offCPU, noWall, noCPU []time.Duration
	for b.Loop() {
		d, cpu := runAgent(b, agent, env, "version")
		offWall, offCPU = append(offWall, d), append(offCPU, cpu)
		d, cpu = runAgent(b, notrace, env, "version")
		noWall, noCPU = append(noWall, d), append(noCPU, cpu)
	}
	b.ReportMetric(float64(median(offWall).Microseconds())/1000, "off-ms")
	b.ReportMetric(float64(median(noWall).Microseconds())/1000, "notrace-ms")
	b.ReportMetric(float64(median(offWall))/float64(median(noWall)), "off/notrace")
	b.ReportMetric(float64(median(offCPU))/float64(median(noCPU)), "off/notrace-cpu")
}
