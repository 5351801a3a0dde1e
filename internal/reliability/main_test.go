//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// moduleRoot is the repository root, seen from this package.
const moduleRoot = "../.."

var (
	agentBin  string   // the agent binary, built once
	crashyBin string   // testdata/crashy, built once, for the host soak
	goEnv     []string // what `go build` inside `agent skill add` needs
)

// launcherEnv makes the test binary a launcher: it runs the agent command
// line it is given and writes two numbers to fd 3: the agent's own peak
// RSS (VmHWM from /proc, sampled every millisecond: it only grows, so only
// growth in the last millisecond before exit can be missed) and the peak
// RSS of the agent and every process it waited for (wait4 rusage, which
// includes its plugins). A launcher is needed because a child's rusage
// peak starts at its parent's RSS, and this test process holds 50 MB
// inputs.
const launcherEnv = "RELIABILITY_LAUNCHER"

func launch() {
	environ := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, launcherEnv+"=") {
			environ = append(environ, kv)
		}
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env = environ
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
	done := make(chan struct{})
	hwm := make(chan int64)
	go func() {
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		var peak int64
		for {
			if v := vmHWM(status); v > peak {
				peak = v
			}
			select {
			case <-done:
				hwm <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	own := <-hwm
	var tree int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		tree = ru.Maxrss * 1024 // kilobytes on Linux
	}
	fmt.Fprintf(os.NewFile(3, "rss"), "%d %d\n", own, tree)
	os.Exit(cmd.ProcessState.ExitCode())
}

// vmHWM reads the peak RSS line of a /proc/<pid>/status file, in bytes.
func vmHWM(status string) int64 {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func TestMain(m *testing.M) {
	if os.Getenv(launcherEnv) == "1" {
		launch()
	}
	dir, err := os.MkdirTemp("", "reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "agent")
	crashyBin = filepath.Join(dir, "crashy")
	for _, b := range []struct{ out, pkg string }{
		{agentBin, "./cmd/agent"},
		{crashyBin, "./internal/reliability/testdata/crashy"},
	} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.out, b.pkg)
		cmd.Dir = moduleRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.pkg, err, out)
			os.Exit(1)
		}
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		os.Exit(1)
	}
	l := strings.Split(strings.TrimSpace(string(out)), "\n")
	goEnv = []string{"GOCACHE=" + l[0], "GOMODCACHE=" + l[1], "GOPATH=" + l[2],
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly", "GOENV=off"}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// result prints the one line that `make reliability` keeps and
// docs/reliability.md quotes.
func result(name, format string, a ...any) {
	fmt.Printf("RESULT %s: %s\n", name, fmt.Sprintf(format, a...))
}

// run is one finished agent process.
type run struct {
	Args    []string
	Stdout  string
	Stderr  string
	Code    int   // exit code; -1 when killed by a signal
	MaxRSS  int64 // the agent's own peak resident set size in bytes
	TreeRSS int64 // the same for the agent and the processes it waited for
}

func (r run) String() string {
	return fmt.Sprintf("agent %q: exit %d\nstdout: %s\nstderr: %s", r.Args, r.Code, clip(r.Stdout), clip(r.Stderr))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// env is the environment of an agent process using home as AGENT_HOME.
func env(home string, extra ...string) []string {
	e := []string{
		"AGENT_HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"LANG=C.UTF-8",
		"TMPDIR=" + os.TempDir(),
		"AGENT_SKILLS=all",
	}
	e = append(e, goEnv...)
	return append(e, extra...)
}

// agentCmd prepares an agent process in its own process group, so that a
// test can find everything it started.
func agentCmd(ctx context.Context, environ []string, stdin string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, agentBin, args...)
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd, &stdout, &stderr
}

func finished(cmd *exec.Cmd, args []string, stdout, stderr *bytes.Buffer) run {
	r := run{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Code: -1}
	if ps := cmd.ProcessState; ps != nil {
		r.Code = ps.ExitCode()
	}
	return r
}

// agent runs the agent binary to completion (at most two minutes).
func agent(t testing.TB, environ []string, args ...string) run {
	t.Helper()
	return agentIn(t, environ, "", args...)
}

// agentIn runs the agent with stdin through the launcher, which measures
// its peak RSS.
func agentIn(t testing.TB, environ []string, stdin string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := agentCmd(ctx, append(environ[:len(environ):len(environ)], launcherEnv+"=1"), stdin, args...)
	cmd.Path, cmd.Args = self, append([]string{self, agentBin}, args...)
	rssR, rssW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{rssW}
	err = cmd.Run()
	rssW.Close()
	rssOut, _ := io.ReadAll(rssR)
	rssR.Close()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("agent %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("agent %q did not finish in two minutes", args)
	}
	r := finished(cmd, args, stdout, stderr)
	if f := strings.Fields(string(rssOut)); len(f) == 2 {
		r.MaxRSS, _ = strconv.ParseInt(f[0], 10, 64)
		r.TreeRSS, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return r
}

// must runs the agent and fails the test unless it exits 0.
func must(t testing.TB, environ []string, args ...string) run {
	t.Helper()
	r := agent(t, environ, args...)
	if r.Code != 0 {
		t.Fatalf("%v", r)
	}
	return r
}

// callResult is what `agent call` prints.
type callResult struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

func parseCall(t testing.TB, r run) callResult {
	t.Helper()
	var c callResult
	if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
		t.Fatalf("agent call printed no JSON result (%v)\n%v", err, r)
	}
	return c
}

// entry is the part of a registry entry the suite checks.
type entry struct {
	Name           string `json:"name"`
	Canonical      string `json:"canonical"`
	CommitSHA      string `json:"commit_sha"`
	Version        string `json:"version"`
	Path           string `json:"path"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Plugin         *struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	} `json:"plugin"`
}

// readRegistry parses registry.json strictly: it must be one valid JSON
// object. A missing file is an empty registry.
func readRegistry(home string) ([]entry, error) {
	b, err := os.ReadFile(filepath.Join(home, "skills", "registry.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("registry.json is not valid JSON (%d bytes)", len(b))
	}
	var f struct {
		Version int     `json:"version"`
		Skills  []entry `json:"skills"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("registry.json: %w", err)
	}
	return f.Skills, nil
}

func fileSHA(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkHome verifies that the files under home match its registry: every
// entry's folder, SKILL.md (by hash) and plugin binary (by hash) exist;
// skills/ holds nothing else but registry.json, .lock and an empty .tmp;
// plugins/ holds only the binaries entries point at. It returns the
// entries.
func checkHome(t testing.TB, home string) []entry {
	t.Helper()
	es, err := readRegistry(home)
	if err != nil {
		t.Fatal(err)
	}
	skills := filepath.Join(home, "skills")
	want := map[string]bool{"registry.json": true, ".index": true, ".lock": true, ".tmp": true}
	plugins := map[string]bool{}
	for _, e := range es {
		want[e.Canonical] = true
		if e.Path != filepath.Join(skills, e.Canonical) {
			t.Errorf("entry %s has path %s", e.Canonical, e.Path)
		}
		m := filepath.Join(e.Path, "SKILL.md")
		if _, err := os.Stat(m); err != nil {
			t.Errorf("entry %s: %v", e.Canonical, err)
		} else if e.ManifestSHA256 != "" && fileSHA(t, m) != e.ManifestSHA256 {
			t.Errorf("entry %s: SKILL.md does not match the registry's hash", e.Canonical)
		}
		if e.Plugin != nil {
			plugins[e.Plugin.Path] = true
			if _, err := os.Stat(e.Plugin.Path); err != nil {
				t.Errorf("entry %s: plugin: %v", e.Canonical, err)
			} else if fileSHA(t, e.Plugin.Path) != e.Plugin.SHA256 {
				t.Errorf("entry %s: plugin binary does not match the registry's hash", e.Canonical)
			}
		}
	}
	ents, _ := os.ReadDir(skills)
	for _, d := range ents {
		if !want[d.Name()] {
			t.Errorf("skills/%s is left over (not in the registry)", d.Name())
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(skills, ".tmp")); len(tmp) > 0 {
		var names []string
		for _, d := range tmp {
			names = append(names, d.Name())
		}
		t.Errorf("skills/.tmp is not empty: %v", names)
	}
	_ = filepath.WalkDir(filepath.Join(home, "plugins"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !plugins[p] {
			t.Errorf("plugin file %s is left over (no entry points at it)", p)
		}
		return nil
	})
	return es
}

// skillRepo is a git repository of skills whose plugins are modules of
// their own requiring the SDK, so that `agent skill add` builds real
// plugins against the SDK it embeds.
type skillRepo struct {
	*gittest.Repo
	versions map[string]string // commit SHA -> crashy's Version at it
}

func newSkillRepo(t testing.TB, extra map[string]string) *skillRepo {
	t.Helper()
	files := gittest.PluginModule(t, "skills/crashy/plugin", "example.com/crashy/plugin")
	main, err := os.ReadFile("testdata/crashy/main.go")
	if err != nil {
		t.Fatal(err)
	}
	files["skills/crashy/plugin/main.go"] = string(main)
	files["skills/crashy/plugin/version.go"] = crashyVersion("1.0.0")
	files["skills/crashy/SKILL.md"] = crashyManifest("1.0.0")
	for k, v := range scriptySkill {
		files[k] = v
	}
	for k, v := range extra {
		files[k] = v
	}
	r := &skillRepo{Repo: gittest.NewRepo(t, files), versions: map[string]string{}}
	r.versions[r.Head(t)] = "1.0.0"
	return r
}

// bump commits a new version of crashy and returns its SHA.
func (r *skillRepo) bump(t testing.TB, version string) string {
	t.Helper()
	sha := r.Commit(t, map[string]string{
		"skills/crashy/plugin/version.go": crashyVersion(version),
		"skills/crashy/SKILL.md":          crashyManifest(version),
	}, version)
	r.versions[sha] = version
	return sha
}

func crashyVersion(v string) string {
	return "package main\n\nconst Version = " + fmt.Sprintf("%q", v) + "\n"
}

func crashyManifest(v string) string {
	return "---\nname: crashy\ndescription: A Go plugin that crashes on purpose.\nversion: " + v +
		"\nplugin:\n  build: ./plugin\npermissions:\n  env: [RELIABILITY_*]\n---\nCall work.\n"
}

// scriptySkill is a script-only skill whose scripts misbehave on request.
var scriptySkill = map[string]string{
	"skills/scripty/SKILL.md": "---\nname: scripty\ndescription: Scripts that misbehave on purpose.\n---\nRun the scripts.\n",
	"skills/scripty/scripts/hello.py": `"""Say hello. Usage: hello.py [--json]"""
import json, sys
if "--help" in sys.argv:
    print(__doc__); sys.exit(0)
print(json.dumps({"hello": "world", "args": sys.argv[1:-1]}))
`,
	// spawn starts children that start grandchildren, all tagged with the
	// token in argv so that the test can find them in /proc, then sleeps.
	"skills/scripty/scripts/spawn.py": `"""Spawn tagged descendants and sleep. Usage: spawn.py TOKEN SECONDS [--json]"""
import subprocess, sys, time
if "--help" in sys.argv:
    print(__doc__); sys.exit(0)
token, secs = sys.argv[1], float(sys.argv[2])
child = "import subprocess,sys,time; subprocess.Popen([sys.executable,'-c','import time; time.sleep(600)',sys.argv[1]]); time.sleep(600)"
for _ in range(2):
    subprocess.Popen([sys.executable, "-c", child, token])
print("spawned", file=sys.stderr, flush=True)
time.sleep(secs)
print('{"done": true}')
`,
	// daemon starts a tagged child in a new session (setsid), which
	// leaves the script's process group, then sleeps and exits.
	"skills/scripty/scripts/daemon.py": `"""Start a setsid daemon. Usage: daemon.py TOKEN SECONDS [--json]"""
import subprocess, sys, time
if "--help" in sys.argv:
    print(__doc__); sys.exit(0)
token, secs = sys.argv[1], float(sys.argv[2])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", token], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(secs)
print('{"done": true}')
`,
	"skills/scripty/scripts/flood.py": `"""Write n MiB to stdout. Usage: flood.py MIB [--json]"""
import sys
if "--help" in sys.argv:
    print(__doc__); sys.exit(0)
chunk = "x" * (1 << 20)
for _ in range(int(sys.argv[1])):
    sys.stdout.write(chunk)
`,
	"skills/scripty/scripts/noisy.py": `"""Write to stderr forever. Usage: noisy.py [--json]"""
import sys
if "--help" in sys.argv:
    print(__doc__); sys.exit(0)
line = "noise " * 100 + "\n"
while True:
    sys.stderr.write(line)
`,
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
