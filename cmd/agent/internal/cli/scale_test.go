//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
)

// indexedHome is a home with n skills (scripts scripts and a plugin tool
// each) whose entries carry the listing that `agent skill add` records, as
// a home after n adds has.
func indexedHome(t testing.TB, n, scripts int) string {
	t.Helper()
	home := t.TempDir()
	writeIndexedHome(t, home, n, scripts)
	return home
}

func writeIndexedHome(t testing.TB, home string, n, scripts int) {
	t.Helper()
	var entries []registry.Entry
	for i, sk := range manySkills(n, scripts) {
		name := fmt.Sprintf("skill-%04d", i)
		dir := filepath.Join(home, "skills", name)
		for file, content := range sk.files {
			if file == "SKILL.md" {
				content = strings.Replace(content, fmt.Sprintf("name: skill-%02d\n", i), "name: "+name+"\n", 1)
			}
			p := filepath.Join(dir, filepath.FromSlash(file))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e := sk.entry
		e.Name, e.Canonical, e.Path = name, name, dir
		e.Tools[0].Name = name + "_tool"
		m, warns, err := gitsrc.LoadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if e.Listing, err = registry.NewListing(dir, m, warns, install.RunnableScripts(dir, m)); err != nil {
			t.Fatal(err)
		}
		e.Description = m.Description
		entries = append(entries, e)
	}
	data, err := json.Marshal(map[string]any{"version": 1, "skills": entries})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "skills", "registry.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestListingsOpenNoSkillMD proves that with 1,000 installed skills,
// `agent tools`, `agent prompt` and `agent skill list` open no SKILL.md
// and no other file of any skill: they read the registry's index. The
// watch sees real kernel open events (inotify).
func TestListingsOpenNoSkillMD(t *testing.T) {
	t.Parallel()
	home := indexedHome(t, 1000, 2)
	var dirs []string
	for i := 0; i < 1000; i++ {
		d := filepath.Join(home, "skills", fmt.Sprintf("skill-%04d", i))
		dirs = append(dirs, d, filepath.Join(d, "scripts"))
	}
	w := newOpenWatch(t, dirs...)
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}
	// The first read after the fixture wrote registry.json by hand writes
	// the index; it too must not open a skill's files.
	for _, args := range [][]string{{"tools"}, {"tools"}, {"tools", "--json"}, {"prompt"}, {"skill", "list"}, {"check"}} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			w.files(t)
			out, errOut, code := runInProcess(t, env, args...)
			if code != 0 {
				t.Fatalf("agent %v: exit %d\n%s", args, code, errOut)
			}
			if args[0] == "tools" && !strings.Contains(out, "skill-0999_tool") {
				t.Fatalf("agent %v does not list skill-0999's tool:\n%.500s", args, out)
			}
			if got := w.files(t); len(got) > 0 {
				t.Errorf("agent %v opened %d skill files, such as %v; want none", args, len(got), got[:min(len(got), 3)])
			}
		})
	}
	// The watch works: showing a skill reads its SKILL.md.
	w.files(t)
	if _, errOut, code := runInProcess(t, env, "skill", "show", "skill-0007"); code != 0 {
		t.Fatalf("skill show: %s", errOut)
	}
	if got := w.files(t); !slices.Contains(got, filepath.Join(home, "skills", "skill-0007", "SKILL.md")) {
		t.Fatalf("the watch saw %v for skill show; want skill-0007/SKILL.md", got)
	}
}

// TestListingFallsBackWhenSKILLMDChanged: an edited SKILL.md no longer
// matches its fingerprint, so listings parse it, and the tamper check
// refuses it as before.
func TestListingFallsBackWhenSKILLMDChanged(t *testing.T) {
	t.Parallel()
	home := indexedHome(t, 3, 1)
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}
	p := filepath.Join(home, "skills", "skill-0001", "SKILL.md")
	if err := os.WriteFile(p, []byte("---\nname: skill-0001\ndescription: Rewritten after install.\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runInProcess(t, env, "prompt")
	if code != 0 || !strings.Contains(out, "Rewritten after install.") || strings.Contains(out, sampleDescriptions[1]) {
		t.Fatalf("prompt after an edit = %d\n%s; want the new description, read from SKILL.md", code, out)
	}
}

// agentBinary builds the agent binary once per benchmark.
func agentBinary(b *testing.B) string {
	b.Helper()
	agent := filepath.Join(b.TempDir(), "agent")
	build := exec.Command("go", "build", "-o", agent, "github.com/agentskills/agent/cmd/agent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return agent
}

// runAgent runs agent and returns its wall time and its CPU time (user +
// system), which a shared machine disturbs much less.
func runAgent(b *testing.B, agent string, env []string, args ...string) (time.Duration, time.Duration) {
	b.Helper()
	c := exec.Command(agent, args...)
	c.Env = env
	start := time.Now()
	out, err := c.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("agent %v: %v\n%s", args, err, out)
	}
	return d, c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkListings1000 runs `agent version`, `tools`, `prompt` and
// `skill list` as new processes, one after the other in each iteration,
// over a home with 1,000 skills (2 scripts and a plugin tool each), and
// reports each command's median and its ratio to `agent version` in the
// same run (SPEC §11: ≤ 2.5×).
func BenchmarkListings1000(b *testing.B) {
	agent := agentBinary(b)
	home := indexedHome(b, 1000, 2)
	env := []string{"AGENT_HOME=" + home, "AGENT_SKILLS=all", "PATH=" + os.Getenv("PATH")}
	cmds := [][]string{{"version"}, {"tools"}, {"prompt"}, {"skill", "list"}}
	runAgent(b, agent, env, "tools") // writes the index the hand-made fixture lacks
	durs := make([][]time.Duration, len(cmds))
	cpus := make([][]time.Duration, len(cmds))
	for b.Loop() {
		for i, c := range cmds {
			d, cpu := runAgent(b, agent, env, c...)
			durs[i] = append(durs[i], d)
			cpus[i] = append(cpus[i], cpu)
		}
	}
	base, baseCPU := median(durs[0]), median(cpus[0])
	b.ReportMetric(float64(base.Microseconds())/1000, "version-ms")
	for i, c := range cmds[1:] {
		m, cpu := median(durs[i+1]), median(cpus[i+1])
		name := strings.Join(c, "-")
		b.ReportMetric(float64(m.Microseconds())/1000, name+"-ms")
		b.ReportMetric(float64(m)/float64(base), name+"/version")
		b.ReportMetric(float64(cpu)/float64(baseCPU), name+"/version-cpu")
	}
}

// BenchmarkAddRemove runs `agent skill add` of a one-file skill from a
// file:// repository and `agent skill remove`, as new processes, into a
// home with no skills and one with 1,000, alternating, and reports the
// ratio (SPEC §11: ≤ 1.5×).
func BenchmarkAddRemove(b *testing.B) {
	agent := agentBinary(b)
	repo := gittest.NewRepo(b, map[string]string{"SKILL.md": "---\nname: one-file\ndescription: A skill of one file.\n---\nDo the thing.\n"})
	empty := b.TempDir()
	full := indexedHome(b, 1000, 2)
	homes := []string{empty, full}
	for _, h := range homes {
		env := []string{"AGENT_HOME=" + h, "PATH=" + os.Getenv("PATH")}
		runAgent(b, agent, env, "skill", "list") // index of the fixture
	}
	durs := make([][]time.Duration, 2)
	cpus := make([][]time.Duration, 2)
	for b.Loop() {
		for i, h := range homes {
			env := []string{"AGENT_HOME=" + h, "PATH=" + os.Getenv("PATH")}
			d, c := runAgent(b, agent, env, "skill", "add", repo.FileURL(), "--trust")
			d2, c2 := runAgent(b, agent, env, "skill", "remove", "one-file", "--yes")
			durs[i] = append(durs[i], d+d2)
			cpus[i] = append(cpus[i], c+c2)
		}
	}
	m0, m1 := median(durs[0]), median(durs[1])
	b.ReportMetric(float64(m0.Microseconds())/1000, "at0-ms")
	b.ReportMetric(float64(m1.Microseconds())/1000, "at1000-ms")
	b.ReportMetric(float64(m1)/float64(m0), "1000/0")
	b.ReportMetric(float64(median(cpus[1]))/float64(median(cpus[0])), "1000/0-cpu")
}

// BenchmarkTools1000InProcess is `agent tools` in process over 1,000
// skills, for profiling the listing path; BenchmarkPrompt1000InProcess is
// `agent prompt` over the same home.
func BenchmarkTools1000InProcess(b *testing.B)  { benchListing1000(b, "tools") }
func BenchmarkPrompt1000InProcess(b *testing.B) { benchListing1000(b, "prompt") }

func benchListing1000(b *testing.B, cmd string) {
	home := indexedHome(b, 1000, 2)
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}
	runInProcess(b, env, cmd)
	for b.Loop() {
		if _, errOut, code := runInProcess(b, env, cmd); code != 0 {
			b.Fatal(errOut)
		}
	}
}

func TestMakeScaleHome(t *testing.T) {
	dst := os.Getenv("SCALE_HOME")
	if dst == "" {
		t.Skip("SCALE_HOME not set")
	}
	writeIndexedHome(t, dst, 1000, 2)
}
