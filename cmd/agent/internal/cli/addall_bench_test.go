package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// addAllSkills is the size of the repository of BenchmarkAddAll (SPEC §11).
const addAllSkills = 1000

// addAllRepo writes a git repository of n skills under skills/: each has a
// SKILL.md with the frontmatter and body a published skill has, and three
// in four a small PEP 723 script (the others are instructions only).
func addAllRepo(t testing.TB, n int) *gittest.Repo {
	t.Helper()
	files := map[string]string{
		"README.md": "# A collection of skills\n\nInstall them all with `agent skill add <this repo> --all`.\n",
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("skill-%04d", i)
		dir := "skills/" + name + "/"
		body := fmt.Sprintf("# %s\n\n## When to use\n\nUse this skill when the user asks for report %d, or for a summary of it.\n\n"+
			"## Steps\n\n1. Read the input the user names.\n2. Run `scripts/run.py` with the file as its argument.\n"+
			"3. Summarise the result in three bullet points.\n\n## Notes\n\n%s\n", name, i,
			strings.Repeat("Keep the summary short and cite the lines it comes from. ", 12))
		files[dir+"SKILL.md"] = "---\nname: " + name + "\n" +
			"description: \"" + sampleDescriptions[i%len(sampleDescriptions)] + "\"\n" +
			"license: Apache-2.0\nmetadata:\n  author: bench\n  version: \"1.0\"\n---\n" + body
		if i%4 != 3 {
			files[dir+"scripts/run.py"] = "# /// script\n# requires-python = \">=3.9\"\n# dependencies = []\n# ///\n" +
				"\"\"\"Count the lines of a file.\"\"\"\nimport sys\n\n\ndef main():\n" +
				"    with open(sys.argv[1]) as f:\n        print(sum(1 for _ in f))\n\n\nif __name__ == \"__main__\":\n    main()\n"
		}
	}
	return gittest.NewRepo(t, files)
}

// BenchmarkAddAll compares, in one run, `agent skill add --all --trust` of a
// file:// repository of 1,000 skills, run in process through the CLI's own
// code, with `git clone --depth 1` of the same repository (SPEC §11: ≤ 10×).
// Each iteration adds into a fresh AGENT_HOME. For a profile:
//
//	go test -run '^$' -bench AddAll -count 1 -cpuprofile cpu.out ./cmd/agent/internal/cli/
func BenchmarkAddAll(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	start := time.Now()
	repo := addAllRepo(b, addAllSkills)
	b.Logf("generated %d skills in %s", addAllSkills, time.Since(start))
	url := repo.FileURL()
	var clones, adds []time.Duration
	for b.Loop() {
		tmp := b.TempDir()
		env := []string{"HOME=" + tmp, "PATH=" + os.Getenv("PATH")}
		d, _ := timed(b, env, "git", "clone", "-q", "--depth", "1", url, filepath.Join(tmp, "clone"))
		clones = append(clones, d)

		home := filepath.Join(tmp, "home")
		start := time.Now()
		_, errOut, code := runInProcess(b, map[string]string{"AGENT_HOME": home, "HOME": tmp, "PATH": os.Getenv("PATH")},
			"skill", "add", url, "--all", "--trust")
		adds = append(adds, time.Since(start))
		if code != 0 {
			b.Fatalf("skill add --all: exit %d\n%.2000s", code, errOut)
		}
		if got := strings.Count(errOut, "Installed "); got != addAllSkills {
			b.Fatalf("skill add --all installed %d skills, want %d\n%.2000s", got, addAllSkills, errOut)
		}
	}
	clone, add := median(clones), median(adds)
	b.ReportMetric(float64(clone.Microseconds())/1000, "clone-ms")
	b.ReportMetric(float64(add.Microseconds())/1000, "add-ms")
	b.ReportMetric(float64(add)/float64(clone), "x-clone")
}
