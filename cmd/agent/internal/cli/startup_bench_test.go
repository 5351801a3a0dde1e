//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// librariesOnlyBinary builds a program that links exactly the third-party
// and standard packages agent links (it imports every importable one
// blank, so every init they have runs) and prints a version, and nothing of
// this project. The file lives in an -overlay, so nothing is written into
// the source tree.
func librariesOnlyBinary(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/agentskills/agent/cmd/agent").Output()
	if err != nil {
		b.Fatalf("go list: %v", err)
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"os\"\n")
	n := 0
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/agentskills/agent") || strings.Contains(p, "/internal/") ||
			strings.HasSuffix(p, "/internal") || strings.HasPrefix(p, "vendor/") {
			continue // this project's own, or not importable from here (pulled in by its importer)
		}
		fmt.Fprintf(&src, "\t_ %q\n", p)
		n++
	}
	src.WriteString(")\n\nfunc main() { os.Stdout.WriteString(\"0.1.0\\n\") }\n")
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/agentskills/agent").Output()
	if err != nil {
		b.Fatalf("go list -m: %v", err)
	}
	dir := b.TempDir()
	mainGo := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainGo, []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	virtual := filepath.Join(strings.TrimSpace(string(root)), "internal", "librariesonly", "main.go")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {virtual: mainGo}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "libraries-only")
	build := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "github.com/agentskills/agent/internal/librariesonly")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build of the libraries-only program (%d packages): %v\n%s", n, err, out)
	}
	b.Logf("libraries-only program imports %d packages", n)
	return bin
}

// BenchmarkVersionOverLibraries runs `agent version` and a program that
// links the same libraries but none of this project's code, alternately as
// new processes, and reports their medians and the ratio (SPEC §11:
// ≤ 1.3×). What agent adds to the libraries' start-up is its own inits,
// cobra's command tree and the version command.
func BenchmarkVersionOverLibraries(b *testing.B) {
	agent := agentBinary(b)
	libs := librariesOnlyBinary(b)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	var agentWall, agentCPU, libsWall, libsCPU []time.Duration
	for b.Loop() {
		d, cpu := runAgent(b, agent, env, "version")
		agentWall, agentCPU = append(agentWall, d), append(agentCPU, cpu)
		d, cpu = runAgent(b, libs, env)
		libsWall, libsCPU = append(libsWall, d), append(libsCPU, cpu)
	}
	b.ReportMetric(float64(median(agentWall).Microseconds())/1000, "version-ms")
	b.ReportMetric(float64(median(libsWall).Microseconds())/1000, "libraries-ms")
	b.ReportMetric(float64(median(agentWall))/float64(median(libsWall)), "version/libraries")
	b.ReportMetric(float64(median(agentCPU))/float64(median(libsCPU)), "version/libraries-cpu")
}

// BenchmarkShimEntry: what the sandbox's shim (internal/isolation/sandbox/confine,
// shim_linux.go) costs per start when the shim is agent itself, as for
// the scripts and commands of the bundled plugins: agent run as a new
// process with the shim's variable set but malformed, so that the
// shim's entry (internal/isolation/sandbox/confine's init, before main) exits 126 at once,
// against `agent version` alternately; medians.
func BenchmarkShimEntry(b *testing.B) {
	agent := agentBinary(b)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	var entry, version []time.Duration
	for b.Loop() {
		c := exec.Command(agent)
		c.Env = append(env, "AGENT_SANDBOX_SHIM=malformed")
		t0 := time.Now()
		out, err := c.CombinedOutput()
		d := time.Since(t0)
		if c.ProcessState == nil || c.ProcessState.ExitCode() != 126 || !strings.Contains(string(out), "agent sandbox shim: malformed") {
			b.Fatalf("agent as a malformed shim: %v\n%s", err, out)
		}
		entry = append(entry, d)
		d, _ = runAgent(b, agent, env, "version")
		version = append(version, d)
	}
	b.ReportMetric(float64(median(entry).Microseconds())/1000, "shim-entry-ms")
	b.ReportMetric(float64(median(version).Microseconds())/1000, "version-ms")
}
