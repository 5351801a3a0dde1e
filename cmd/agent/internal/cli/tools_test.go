package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
)

// TestToolsStartsNoProcess runs `agent tools` as a real process under
// strace, with 50 skills that each have scripts and a plugin, and asserts
// that the only program executed is agent itself: tools come from the
// registry cache and the script tools are described in process.
func TestToolsStartsNoProcess(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(t.TempDir(), "agent")
	if err := os.Symlink(self, agent); err != nil {
		t.Fatal(err)
	}
	skills := manySkills(50, 10)
	for i := range skills {
		// A plugin that would fail loudly if anything tried to run it.
		skills[i].entry.Plugin = &registry.Plugin{Path: "nonexistent/plugin", SHA256: strings.Repeat("0", 64)}
	}
	home := writeFixtureHome(t, skills)
	log := filepath.Join(t.TempDir(), "strace.log")
	c := exec.Command(strace, "-f", "-qq", "-e", "trace=execve,fork,vfork", "-o", log, agent, "tools", "--json")
	c.Env = append(os.Environ(), "AGENT_HOME="+home, "AGENT_SKILLS=all")
	out, err := c.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "ptrace") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("agent tools: %v\n%s", err, out)
	}
	for _, want := range []string{`"name": "script_run"`, `"name": "skill-49_tool"`} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("agent tools output lacks %s:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var execs []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "execve(") || strings.Contains(line, "fork(") {
			execs = append(execs, line)
		}
	}
	if len(execs) != 1 || !strings.Contains(execs[0], agent) {
		t.Errorf("agent tools started processes:\n%s", strings.Join(execs, "\n"))
	}
}
