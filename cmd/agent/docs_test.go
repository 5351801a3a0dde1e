package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// codeBlock is one fenced block of a markdown file.
type codeBlock struct {
	line int    // of the opening fence
	info string // the text after the fence: "sh", "sh skip=needs the network"
	text string
}

// codeBlocks returns the fenced blocks of a markdown file, in order.
func codeBlocks(t *testing.T, file string) []codeBlock {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []codeBlock
	var cur *codeBlock
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line + "\n")
			}
			continue
		}
		if cur == nil {
			cur = &codeBlock{line: n, info: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
			body.Reset()
			continue
		}
		cur.text = body.String()
		out = append(out, *cur)
		cur = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block is never closed", file, cur.line)
	}
	return out
}

// runnable reports whether a block is commands to run: its language is
// sh or bash and it is not marked skip=<why> (the network, a GUI client,
// a person). Other languages are data (SKILL.md, YAML, JSON, Go, output).
func (b codeBlock) runnable() (bool, string) {
	fields := strings.Fields(b.info)
	if len(fields) == 0 || (fields[0] != "sh" && fields[0] != "bash") {
		return false, ""
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "skip") {
			return false, strings.TrimPrefix(strings.TrimPrefix(b.info, fields[0]), " ")
		}
	}
	return true, ""
}

// TestDocsCodeBlocks runs every shell block of README.md and docs/*.md as
// written, in order, one bash session per file, in a fresh clone of this
// repository with a fresh AGENT_HOME and HOME: the README's "." is a local
// repository, so nothing needs the network; a guide's blocks run with agent
// installed as the README's "make build" installs it. A block that needs the network,
// a GUI client or a person says so as ```sh skip=<why>; a block without a
// language or in another one is data and is not run, except that a plain
// ``` block must not hold an agent command, so that no example escapes the
// test by leaving its language out.
func TestDocsCodeBlocks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the blocks are POSIX shell")
	}
	for _, tool := range []string{"bash", "git", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the documentation's examples: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	// A guide's reader has installed agent as the README says: make build,
	// once, in a clone of its own; the files run at once, each in its clone.
	bin := buildAgent(t, root)
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			var script strings.Builder
			script.WriteString("set -euo pipefail\n")
			if rel != "README.md" {
				script.WriteString("export PATH=" + strconv.Quote(bin) + ":\"$PATH\"\n")
			}
			ran := 0
			for _, b := range codeBlocks(t, file) {
				ok, why := b.runnable()
				if b.info == "" && strings.Contains(b.text, "agent skill ") {
					t.Errorf("%s:%d: a block of agent commands has no language: mark it ```sh (or ```sh skip=<why>)", rel, b.line)
				}
				if !ok {
					if why != "" {
						t.Logf("%s:%d: not run: %s", rel, b.line, why)
					}
					continue
				}
				ran++
				script.WriteString("echo '>>> " + rel + ":" + strconv.Itoa(b.line) + "' >&2\n")
				script.WriteString(b.text)
			}
			if ran == 0 {
				return
			}
			runBlocks(t, root, "", script.String())
		})
	}
}

// buildAgent runs make build in a fresh clone of root and returns the
// folder that holds the agent it built.
func buildAgent(t *testing.T, root string) string {
	t.Helper()
	tmp := t.TempDir()
	runBlocks(t, root, tmp, "set -euo pipefail\nmake -s build >/dev/null\n")
	return filepath.Join(tmp, "agent", "bin")
}

// runBlocks runs script in a fresh clone of root with a fresh AGENT_HOME
// and HOME, under tmp (a new temporary folder when ""); the go caches stay
// the user's, so that builds are warm.
func runBlocks(t *testing.T, root, tmp, script string) {
	t.Helper()
	if tmp == "" {
		tmp = t.TempDir()
	}
	clone := filepath.Join(tmp, "agent")
	if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v\n%s", root, err, out)
	}
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = clone
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"),
		"AGENT_HOME=" + filepath.Join(tmp, "agent-home"),
		"TMPDIR=" + os.TempDir(),
		"GOCACHE=" + goEnv("GOCACHE"), "GOMODCACHE=" + goEnv("GOMODCACHE"),
		"GOFLAGS=" + os.Getenv("GOFLAGS"), "GOPROXY=" + goEnv("GOPROXY"), "GOTOOLCHAIN=local",
		"GIT_AUTHOR_NAME=docs", "GIT_AUTHOR_EMAIL=docs@example.com",
		"GIT_COMMITTER_NAME=docs", "GIT_COMMITTER_EMAIL=docs@example.com",
	}
	if err := os.MkdirAll(filepath.Join(tmp, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the examples failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestReadmeShort: the README is the first five minutes (issue 35); the
// rest belongs in docs/, one guide per topic.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it to 250 and move the rest to docs/", n)
	}
}
