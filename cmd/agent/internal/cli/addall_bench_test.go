//go:build linux

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
// repository of 1,000 skills, run in process through the CLI's own code,
// with `git clone --depth 1` of the same repository over the same
// transport (SPEC §11: ≤ 10×): file:// (which add reads in place) and
// loopback `git http-backend` (which add fetches at depth 1 into its
// cache). Each iteration adds into a fresh AGENT_HOME, so nothing is
// cached. x-clone is the higher of the two ratios. For a profile:
//
//	go test -run '^$' -bench AddAll -count 1 -cpuprofile cpu.out ./cmd/agent/internal/cli/
func BenchmarkAddAll(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	start := time.Now()
	repo := addAllRepo(b, addAllSkills)
	b.Logf("generated %d skills in %s", addAllSkills, time.Since(start))
	urls := []struct{ name, url string }{
		{"file", repo.FileURL()},
		{"http", gittest.ServeRepo(b, repo)},
	}
	clones := make([][]time.Duration, len(urls))
	adds := make([][]time.Duration, len(urls))
	for b.Loop() {
		for i, u := range urls {
			tmp := b.TempDir()
			env := []string{"HOME=" + tmp, "PATH=" + os.Getenv("PATH")}
			d, _ := timed(b, env, "git", "clone", "-q", "--depth", "1", u.url, filepath.Join(tmp, "clone"))
			clones[i] = append(clones[i], d)

			start := time.Now()
			_, errOut, code := runInProcess(b, map[string]string{"AGENT_HOME": filepath.Join(tmp, "home"), "HOME": tmp, "PATH": os.Getenv("PATH")},
				"skill", "add", u.url, "--all", "--trust")
			adds[i] = append(adds[i], time.Since(start))
			if code != 0 {
				b.Fatalf("skill add --all %s: exit %d\n%.2000s", u.url, code, errOut)
			}
			if got := strings.Count(errOut, "Installed "); got != addAllSkills {
				b.Fatalf("skill add --all %s installed %d skills, want %d\n%.2000s", u.url, got, addAllSkills, errOut)
			}
		}
	}
	worst := 0.0
	for i, u := range urls {
		clone, add := median(clones[i]), median(adds[i])
		ratio := float64(add) / float64(clone)
		worst = max(worst, ratio)
		b.ReportMetric(float64(clone.Microseconds())/1000, u.name+"-clone-ms")
		b.ReportMetric(float64(add.Microseconds())/1000, u.name+"-add-ms")
		b.ReportMetric(ratio, u.name+"-x-clone")
	}
	b.ReportMetric(worst, "x-clone")
}
