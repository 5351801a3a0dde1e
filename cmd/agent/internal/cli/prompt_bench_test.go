package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
)

// Realistic descriptions, of the length skill authors write.
var sampleDescriptions = []string{
	"Fetches and summarises Kalshi prediction markets: prices, volumes and order books. Use when the user asks about event odds.",
	"Converts CSV and Excel files into charts and summary tables. Use when the user shares tabular data and wants a plot.",
	"Searches, reads and annotates PDF documents, extracting tables and figures. Use for questions about a PDF.",
	"Manages GitHub issues and pull requests: list, triage, label, review. Use when the task mentions a GitHub repository.",
	"Queries PostgreSQL databases read-only and explains query plans. Use when the user asks about data in a database.",
	"Checks the weather forecast and alerts for a place and date. Use when the user asks about weather or what to wear.",
	"Drafts, formats and sends e-mail through SMTP with templates. Use when asked to write or send an e-mail.",
	"Translates text between 100 languages while keeping formatting. Use when the user asks for a translation.",
	"Runs and explains Kubernetes kubectl commands for a cluster. Use for questions about pods, deployments or logs.",
	"Tracks personal expenses in a ledger and produces monthly reports. Use when the user records or asks about spending.",
}

// manySkills returns n trusted skills with the given number of scripts each
// and a cached plugin tool, named skill-00, skill-01, ...
func manySkills(n, scripts int) []fixtureSkill {
	var out []fixtureSkill
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("skill-%02d", i)
		files := map[string]string{
			"SKILL.md": "---\nname: " + name + "\ndescription: \"" + sampleDescriptions[i%len(sampleDescriptions)] + "\"\n---\n" +
				strings.Repeat("Step by step instructions that stay out of Layer 1. ", 40) + "\n",
		}
		for j := 0; j < scripts; j++ {
			files[fmt.Sprintf("scripts/tool_%02d.py", j)] = "# /// script\n# dependencies = []\n# ///\nprint('x')\n"
		}
		e := registry.Entry{
			Name:      name,
			Canonical: name,
			Trusted:   true,
			Tools:     []registry.Tool{{Name: name + "_tool", Description: "A tool.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			Origin:    registry.Origin{Source: "git", CommitSHA: strings.Repeat("b", 40)},
		}
		out = append(out, fixtureSkill{entry: e, files: files})
	}
	return out
}

// helloExtended is examples/skills/hello-extended when it exists, else a
// stand-in with the description and scripts it is specified to have.
func helloExtended(t testing.TB) fixtureSkill {
	t.Helper()
	e := registry.Entry{Name: "hello-extended", Canonical: "hello-extended", Trusted: true, Origin: registry.Origin{Source: "git", CommitSHA: strings.Repeat("c", 40)}}
	dir := filepath.Join("..", "..", "..", "..", "examples", "skills", "hello-extended")
	if data, err := os.ReadFile(filepath.Join(dir, "SKILL.md")); err == nil {
		files := map[string]string{"SKILL.md": string(data)}
		scripts, _ := filepath.Glob(filepath.Join(dir, "scripts", "*.py"))
		for _, s := range scripts {
			files["scripts/"+filepath.Base(s)] = "print('x')\n" // content is never read
		}
		return fixtureSkill{entry: e, files: files}
	}
	return fixtureSkill{entry: e, files: map[string]string{
		"SKILL.md":                     "---\nname: hello-extended\ndescription: Greets people in many languages, with a Go plugin (greet_in_language, greet_multiple) and a PEP 723 script (advanced_greeting). Use when asked to greet someone.\n---\nbody\n",
		"scripts/advanced_greeting.py": "print('x')\n",
	}}
}

// TestContextOverheadTable prints the Layer 1 cost table of SPEC §11 as
// markdown (run with -v), measured through `agent prompt --json`, and holds
// 10 skills of 10 scripts each to 1,000 tokens.
func TestContextOverheadTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		skills []fixtureSkill
		spec   string
		limit  int
	}{
		{"no skills (AGENT_SKILLS unset)", nil, "", 0},
		{"bundled only (skill-authoring)", nil, "all", 0},
		{"hello-extended", []fixtureSkill{helloExtended(t)}, "hello-extended", 0},
		{"10 skills × 10 scripts", manySkills(10, 10), "all", 1000},
		{"50 skills × 10 scripts", manySkills(50, 10), "all", 0},
	}
	var b strings.Builder
	b.WriteString("| Layer 1 with | skills | characters | tokens (cl100k_base) | target |\n|---|---:|---:|---:|---|\n")
	for _, c := range cases {
		home := writeFixtureHome(t, c.skills)
		env := map[string]string{"AGENT_HOME": home}
		if c.spec != "" {
			env["AGENT_SKILLS"] = c.spec
		}
		if c.spec == "all" && len(c.skills) > 0 {
			env["AGENT_SKILLS"] = strings.Join(canonicalNames(c.skills), ",") // leave the bundled skill out
		}
		out, errOut, code := runInProcess(t, env, "prompt", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		var r promptJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		target := "—"
		if c.limit > 0 {
			target = fmt.Sprintf("≤ %d", c.limit)
			if r.Tokens > c.limit {
				t.Errorf("%s: %d tokens, over the SPEC §11 target of %d", c.name, r.Tokens, c.limit)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s |\n", c.name, len(r.Skills), r.Chars, r.Tokens, target)
	}
	t.Logf("context overhead (go test ./cmd/agent/internal/cli -run TestContextOverheadTable -v):\n\n%s", b.String())
}

func canonicalNames(skills []fixtureSkill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.entry.Canonical)
	}
	return out
}

// BenchmarkPrompt50Skills runs `agent prompt` in process over 50 installed
// skills with 10 scripts each: config, registry, 50 SKILL.md files, Layer 1
// and the token count. The tokenizer's table is opened once per process;
// BenchmarkTokenizerLoad in package disclosure measures that part.
func BenchmarkPrompt50Skills(b *testing.B) {
	benchCommand(b, "prompt")
}

// BenchmarkCheck50Skills is the same for `agent check`.
func BenchmarkCheck50Skills(b *testing.B) {
	benchCommand(b, "check")
}

// BenchmarkTools50Skills is `agent tools` over the same home, for
// comparison (it builds the cli's Workspace).
func BenchmarkTools50Skills(b *testing.B) {
	benchCommand(b, "tools")
}

func benchCommand(b *testing.B, args ...string) {
	home := writeFixtureHome(b, manySkills(50, 10))
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}
	for b.Loop() {
		if _, errOut, code := runInProcess(b, env, args...); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut)
		}
	}
}

// TestPrompt50SkillsStartsNoProcess runs `agent prompt` and `agent check` as
// real processes (this test binary, named agent) under strace, with 50
// skills installed, and asserts that the only program executed is agent
// itself.
func TestPrompt50SkillsStartsNoProcess(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	agent := filepath.Join(bin, "agent")
	if err := os.Symlink(self, agent); err != nil {
		t.Fatal(err)
	}
	home := writeFixtureHome(t, manySkills(50, 10))
	for _, cmd := range []string{"prompt", "check"} {
		log := filepath.Join(t.TempDir(), "strace.log")
		c := exec.Command(strace, "-f", "-qq", "-e", "trace=execve,fork,vfork", "-o", log, agent, cmd)
		c.Env = append(os.Environ(), "AGENT_HOME="+home, "AGENT_SKILLS=all")
		out, err := c.CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "ptrace") {
				t.Skipf("strace cannot trace here: %s", out)
			}
			t.Fatalf("agent %s: %v\n%s", cmd, err, out)
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
			t.Errorf("agent %s started processes:\n%s", cmd, strings.Join(execs, "\n"))
		}
	}
}

// BenchmarkProcess50Skills runs the real agent binary as a new process, the
// way a user or an agent framework does, with 50 skills of 10 scripts
// installed: process start, config, registry and output included. SPEC §11
// holds `agent tools` and `agent prompt` to 30 ms here.
func BenchmarkProcess50Skills(b *testing.B) {
	agent := filepath.Join(b.TempDir(), "agent")
	build := exec.Command("go", "build", "-o", agent, "github.com/agentskills/agent/cmd/agent")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	home := writeFixtureHome(b, manySkills(50, 10))
	for _, cmd := range []string{"tools", "prompt", "version"} {
		b.Run(cmd, func(b *testing.B) {
			for b.Loop() {
				c := exec.Command(agent, cmd)
				c.Env = []string{"AGENT_HOME=" + home, "AGENT_SKILLS=all", "PATH=" + os.Getenv("PATH")}
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("agent %s: %v\n%s", cmd, err, out)
				}
			}
		})
	}
}
