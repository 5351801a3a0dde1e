//go:build linux

package cli

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// The monorepo fixture of SPEC §11: 5,000+ files, 201 commits, about
// 130 MB of (incompressible) history, 50 skills under skills/. Generated
// once with git fast-import into the user's cache directory (not the
// repository) and reused; its branch main is moved between the last two
// commits by the benchmark.
const (
	monoFiles    = 5000 // small files in src/, written by the first commit
	monoCommits  = 200  // commits after the first, on main
	monoDataDirs = 200  // data/ files rewritten by later commits
	monoPerComm  = 6    // data files rewritten per commit
	monoDataSize = 100 << 10
	monoSkills   = 50
	monoVersion  = "v1"
)

// monorepo returns the fixture's bare repository and the SHAs of main's
// last commit and of the one after it (branch next).
func monorepo(b *testing.B) (dir, tip, next string) {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "agent-bench", "monorepo-"+monoVersion)
	dir = filepath.Join(root, "monorepo.git")
	if _, err := os.Stat(filepath.Join(root, "done")); err != nil {
		start := time.Now()
		_ = os.RemoveAll(root)
		if err := os.MkdirAll(root, 0o755); err != nil {
			b.Fatal(err)
		}
		generateMonorepo(b, dir)
		if err := os.WriteFile(filepath.Join(root, "done"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("generated %s in %s", dir, time.Since(start))
	}
	tip = strings.TrimSpace(gitOut(b, dir, "rev-parse", "refs/heads/main-base"))
	next = strings.TrimSpace(gitOut(b, dir, "rev-parse", "refs/heads/next"))
	return dir, tip, next
}

func gitOut(b *testing.B, dir string, args ...string) string {
	b.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := c.CombinedOutput()
	if err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func generateMonorepo(b *testing.B, dir string) {
	b.Helper()
	gitOut(b, filepath.Dir(dir), "init", "-q", "--bare", "-b", "main", dir)
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	random := func(n int) string {
		raw := make([]byte, n*3/4)
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		return base64.StdEncoding.EncodeToString(raw)
	}
	when := int64(1700000000)
	commit := func(ref, from, msg string, files map[string]string) {
		when += 60
		fmt.Fprintf(w, "commit %s\ncommitter bench <bench@example.com> %d +0000\ndata %d\n%s\n", ref, when, len(msg), msg)
		if from != "" {
			fmt.Fprintf(w, "from %s\n", from)
		}
		for p, c := range files {
			fmt.Fprintf(w, "M 644 inline %s\ndata %d\n%s\n", p, len(c), c)
		}
	}
	first := map[string]string{}
	for i := 0; i < monoFiles; i++ {
		first[fmt.Sprintf("src/pkg%03d/file%04d.txt", i%250, i)] = random(1024)
	}
	for i := 0; i < monoDataDirs; i++ {
		first[fmt.Sprintf("data/blob%03d.bin", i)] = random(monoDataSize)
	}
	for i := 0; i < monoSkills; i++ {
		name := fmt.Sprintf("skill-%02d", i)
		first["skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Skill " + name + " of the monorepo fixture.\n---\nDo the thing.\n"
		first["skills/"+name+"/references/notes.md"] = random(4096)
	}
	commit("refs/heads/main", "", "initial", first)
	for c := 1; c < monoCommits; c++ {
		files := map[string]string{}
		for j := 0; j < monoPerComm; j++ {
			files[fmt.Sprintf("data/blob%03d.bin", rng.IntN(monoDataDirs))] = random(monoDataSize)
		}
		files[fmt.Sprintf("src/pkg%03d/file%04d.txt", c%250, c)] = random(1024)
		commit("refs/heads/main", "", fmt.Sprintf("change %d", c), files)
	}
	// next: one more commit that changes the installed skill.
	fmt.Fprintf(w, "reset refs/heads/main-base\nfrom refs/heads/main\n\n")
	commit("refs/heads/next", "refs/heads/main", "next", map[string]string{
		"skills/skill-07/SKILL.md":                    "---\nname: skill-07\ndescription: Skill skill-07, changed.\n---\nDo the new thing.\n",
		fmt.Sprintf("data/blob%03d.bin", 3):           random(monoDataSize),
		fmt.Sprintf("src/pkg%03d/file%04d.txt", 1, 1): random(1024),
	})
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("git fast-import: %v", err)
	}
	gitOut(b, dir, "repack", "-adq")
}

// setMain points the fixture's main at sha (update-ref, as a push would).
func setMain(b *testing.B, dir, sha string) {
	b.Helper()
	gitOut(b, dir, "update-ref", "refs/heads/main", sha)
}

// timed runs a command and returns its wall time and peak RSS in MB.
func timed(b *testing.B, env []string, name string, args ...string) (time.Duration, float64) {
	b.Helper()
	c := exec.Command(name, args...)
	c.Env = env
	start := time.Now()
	out, err := c.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	rss := 0.0
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024
	}
	return d, rss
}

// BenchmarkMonorepo compares, in one run, over file:// and loopback `git
// http-backend`: `agent skill add` of one skill of the fixture against
// `git clone --depth 1` of it (SPEC §11: ≤ 1.0×), and `agent skill update`
// after one new commit against the same clone (≤ 0.5×). It reports the
// add's peak RSS (≤ 150 MB).
func BenchmarkMonorepo(b *testing.B) {
	repo, tip, next := monorepo(b)
	agent := agentBinary(b)
	base := gittest.Serve(b, filepath.Dir(repo))
	urls := []struct{ name, url string }{
		{"file", "file://" + repo},
		{"http", base + "/" + filepath.Base(repo)},
	}
	b.Cleanup(func() { setMain(b, repo, tip) })
	type series struct {
		clone, add, update []time.Duration
		rss                []float64
	}
	res := make([]series, len(urls))
	for b.Loop() {
		for i, u := range urls {
			setMain(b, repo, tip)
			tmp := b.TempDir()
			env := []string{"AGENT_HOME=" + filepath.Join(tmp, "home"), "PATH=" + os.Getenv("PATH"), "HOME=" + tmp}
			d, _ := timed(b, env, "git", "clone", "-q", "--depth", "1", u.url, filepath.Join(tmp, "clone"))
			res[i].clone = append(res[i].clone, d)
			d, rss := timed(b, env, agent, "skill", "add", u.url, "skills/skill-07", "--trust")
			res[i].add = append(res[i].add, d)
			res[i].rss = append(res[i].rss, rss)
			setMain(b, repo, next)
			d, _ = timed(b, env, agent, "skill", "update", "skill-07", "--yes")
			res[i].update = append(res[i].update, d)
		}
	}
	for i, u := range urls {
		r := res[i]
		clone, add, upd := median(r.clone), median(r.add), median(r.update)
		rss := slicesMedian(r.rss)
		b.ReportMetric(float64(clone.Microseconds())/1000, u.name+"-clone-ms")
		b.ReportMetric(float64(add.Microseconds())/1000, u.name+"-add-ms")
		b.ReportMetric(float64(upd.Microseconds())/1000, u.name+"-update-ms")
		b.ReportMetric(float64(add)/float64(clone), u.name+"-add/clone")
		b.ReportMetric(float64(upd)/float64(clone), u.name+"-update/clone")
		b.ReportMetric(rss, u.name+"-add-rss-MB")
	}
}

func slicesMedian(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
