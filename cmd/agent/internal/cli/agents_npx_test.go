package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/placement"
)

// npxSkillsCLI is the pinned npx skills (testdata/npxskills, installed by
// .ci/run with npm ci).
var npxSkillsCLI = filepath.Join("testdata", "npxskills", "node_modules", "skills", "dist", "cli.mjs")

// npxAgents reads the agent names out of npx skills' agent table
// (`const agents = { name: { name: "...", ... }, ... }` in dist/cli.mjs).
func npxAgents(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(npxSkillsCLI)
	if os.IsNotExist(err) {
		t.Skipf("npx skills is not installed (npm ci in %s; .ci/run does)", filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(npxSkillsCLI)))))
	}
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "\nconst agents = {\n")
	if start < 0 {
		t.Fatal("no agent table (const agents = {) in " + npxSkillsCLI)
	}
	end := strings.Index(src[start:], "\n};\n")
	if end < 0 {
		t.Fatal("the agent table of " + npxSkillsCLI + " does not end")
	}
	var names []string
	for _, m := range regexp.MustCompile(`\n\t\tname: "([^"]+)",`).FindAllStringSubmatch(src[start:start+end], -1) {
		names = append(names, m[1])
	}
	if len(names) < 50 {
		t.Fatalf("read only %d agents from %s; has its layout changed?", len(names), npxSkillsCLI)
	}
	return names
}

// TestAgentsCoverNpxSkills fails when the pinned npx skills knows an agent
// that agent skill agents does not.
func TestAgentsCoverNpxSkills(t *testing.T) {
	known := map[string]bool{}
	for _, a := range placement.Agents() {
		known[a.Name] = true
	}
	for _, n := range npxAgents(t) {
		if !known[n] {
			t.Errorf("npx skills knows agent %q; add it to internal/placement/agents.json", n)
		}
	}
}
