package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/registry/manifest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/isolation/procgroup"
	"github.com/agentskills/agent/registry"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of check and prompt under testdata/")

// fixtureSkill is one skill folder plus its registry entry.
type fixtureSkill struct {
	entry registry.Entry
	files map[string]string
}

// fixtureSkills is the AGENT_HOME of the golden tests: a good skill, an
// untrusted one, an incompatible one, a broken one and one only a person may
// invoke. SHAs are fixed so output is stable.
func fixtureSkills() []fixtureSkill {
	sha := func(c byte) string { return strings.Repeat(string(c), 40) }
	return []fixtureSkill{
		{
			entry: registry.Entry{
				Name:      "good",
				Canonical: "good",
				Trusted:   true,
				Tools:     []registry.Tool{{Name: "good_tool", Description: "A good tool."}},
				Origin:    registry.Origin{Source: "git", URL: "https://example.com/good.git", CommitSHA: sha('1'), Version: "1.2.0"},
			},
			files: map[string]string{
				"SKILL.md":            "---\nname: good\ndescription: >-\n  Summarises CSV files.\n  Use when the user shares a table.\nversion: 1.2.0\nscripts_ignore: [\"_*.py\"]\n---\nSummarise $ARGUMENTS[0] with scripts/summary.py.\n",
				"scripts/summary.py":  "print('summary')\n",
				"scripts/chart.py":    "print('chart')\n",
				"scripts/_helper.py":  "print('ignored')\n",
				"references/guide.md": "# A long guide\n",
			},
		},
		{
			entry: registry.Entry{Name: "Untrusted_One", Canonical: "untrusted-one", Origin: registry.Origin{Source: "git", URL: "https://example.com/u.git", CommitSHA: sha('2')}},
			files: map[string]string{
				"SKILL.md":       "---\nname: Untrusted_One\ndescription: From a stranger.\n---\nDo things.\n",
				"scripts/run.py": "print('x')\n",
			},
		},
		{
			entry: registry.Entry{Name: "future", Canonical: "future", Trusted: true, Origin: registry.Origin{Source: "git", URL: "https://example.com/f.git", CommitSHA: sha('3')}},
			files: map[string]string{"SKILL.md": "---\nname: future\ndescription: Needs a newer agent.\nmin_agent_version: 99.0.0\n---\nbody\n"},
		},
		{
			entry: registry.Entry{Name: "broken", Canonical: "broken", Trusted: true, Origin: registry.Origin{Source: "git", URL: "https://example.com/b.git", CommitSHA: sha('4')}},
			files: map[string]string{"SKILL.md": "---\nname: broken\ndescription: x\npermissions: {env: [unclosed\n---\nbody\n"},
		},
		{
			entry: registry.Entry{Name: "deploy", Canonical: "deploy", Trusted: true, Origin: registry.Origin{Source: "git", URL: "https://example.com/d.git", CommitSHA: sha('5')}},
			files: map[string]string{"SKILL.md": "---\nname: deploy\ndescription: Deploys to production.\ndisable-model-invocation: true\n---\nDeploy $0 now.\n"},
		},
	}
}

// writeHome writes an AGENT_HOME holding skills and returns its path.
func writeFixtureHome(t testing.TB, skills []fixtureSkill) string {
	t.Helper()
	home := t.TempDir()
	entries := []registry.Entry{}
	for _, s := range skills {
		dir := filepath.Join(home, "skills", s.entry.Canonical)
		for name, content := range s.files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e := s.entry
		e.Path = dir
		if e.Plugin != nil && !filepath.IsAbs(e.Plugin.Path) {
			// The registry refuses a plugin outside plugins/<canonical>/.
			p := *e.Plugin
			p.Path = filepath.Join(home, "plugins", e.Canonical, p.Path)
			e.Plugin = &p
		}
		entries = append(entries, e)
	}
	data, err := json.MarshalIndent(map[string]any{"version": 1, "skills": entries}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "skills", "registry.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// runAgent runs one command line in process with the given environment and
// returns stdout, stderr and the exit code.
func runInProcess(t testing.TB, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := TestIO()
	f := NewFactory(ios)
	f.LookupEnv = func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the output (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// transcript is what a golden file holds: both streams and the exit code,
// with the temporary AGENT_HOME replaced by $AGENT_HOME.
func goldenTranscript(home, stdout, stderr string, code int) string {
	// What agent check says of this machine's protections differs by
	// platform and build tag; TestCheckProtections covers it.
	r := strings.NewReplacer(home, "$AGENT_HOME",
		platformName(), "$PLATFORM",
		workspace.Launch(), "$LAUNCH",
		strings.Join(procgroup.Protections(), ", "), "$CONTAINMENT",
		sandboxLine(), "$SANDBOX",
		skillSandbox(manifest.Permissions{}, sandbox.Probe()), "$SKILL_SANDBOX")
	return "# exit " + strconv.Itoa(code) + "\n# stdout\n" + r.Replace(stdout) + "# stderr\n" + r.Replace(stderr)
}
