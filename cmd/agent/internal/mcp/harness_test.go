//go:build unix

package mcp_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// moduleRoot is the repository root, seen from this package.
const moduleRoot = "../../../.."

var (
	agentBin string   // the real agent binary, built once by TestMain
	goEnv    []string // what `go build` inside `agent skill add` needs
	tmpRoot  string
	// buildFlags of the agent binary; race_test.go adds -race.
	buildFlags = []string{"-trimpath"}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	agentBin = filepath.Join(dir, "agent")
	cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", agentBin, "./cmd/agent")...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agent: %v\n%s", err, out)
		os.Exit(1)
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

// probeManifest declares write access to the temp folder: its slow tool
// writes the mark that tests read, and plugins run sandboxed (SPEC §8).
var probeManifest = `---
name: probe
description: Tools that exercise the MCP server.
plugin:
  build: ./plugin
permissions:
  fs:
    write: [` + os.TempDir() + `]
argument-hint: "<who> [how]"
---
Probe $ARGUMENTS[0] with $1. All: $ARGUMENTS
`

const notesManifest = `---
name: notes
description: Notes that only the model loads.
user-invocable: false
metadata:
  released: 2024-01-02
---
Read the notes.
`

var (
	repoOnce sync.Once
	repoURL  string
)

// skillRepo is a git repository with two skills: probe (a Go plugin built
// against this module's real SDK, a script and a reference) and notes
// (instructions only).
func skillRepo(t testing.TB) string {
	t.Helper()
	repoOnce.Do(func() {
		files := gittest.PluginModule(t, "skills/probe/plugin", "example.com/probe/plugin")
		main, err := os.ReadFile("testdata/probe/main.go")
		if err != nil {
			t.Fatal(err)
		}
		files["skills/probe/SKILL.md"] = probeManifest
		files["skills/probe/plugin/main.go"] = string(main)
		files["skills/probe/references/guide.md"] = "# Guide\nRead me on demand.\n"
		files["skills/probe/scripts/hello.py"] = "\"\"\"Say hello. Usage: hello.py NAME\"\"\"\nimport sys\nprint('{\"hello\": \"%s\"}' % sys.argv[1])\n"
		files["skills/notes/SKILL.md"] = notesManifest
		repoURL = gittest.NewRepoIn(t, filepath.Join(tmpRoot, "repo"), files).FileURL()
	})
	return repoURL
}

// env is the environment of an agent process using home.
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

// agent runs the agent to completion and fails the test unless it exits 0.
func agent(t testing.TB, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(agentBin, args...)
	cmd.Env = env(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agent %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// newHome installs the named skills of skillRepo, trusted, in a new
// AGENT_HOME.
func newHome(t testing.TB, skills ...string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	for _, s := range skills {
		agent(t, home, "skill", "add", skillRepo(t), s, "--trust")
	}
	return home
}

// session is one client connected to a real `agent mcp` process.
type session struct {
	*sdkmcp.ClientSession
	cmd    *exec.Cmd
	stderr *lockedWriter
}

// connect starts `agent mcp args...` on home and connects go-sdk's client
// to it over stdio (CommandTransport).
func connect(t testing.TB, home string, opts *sdkmcp.ClientOptions, args ...string) *session {
	t.Helper()
	return connectEnv(t, home, nil, opts, args...)
}

// connectEnv is connect with more environment for the server.
func connectEnv(t testing.TB, home string, extraEnv []string, opts *sdkmcp.ClientOptions, args ...string) *session {
	t.Helper()
	cmd := exec.Command(agentBin, append([]string{"mcp"}, args...)...)
	cmd.Env = env(home, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to agent mcp: %v", err)
	}
	s := &session{ClientSession: cs, cmd: cmd, stderr: stderr}
	t.Cleanup(func() {
		// Nothing the server started may outlive it. The group is killed
		// before Close reaps the server: once it is reaped, its id can be
		// reused by another test's process group (pid_max is 32,768 here).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cs.Close()
		if t.Failed() {
			t.Logf("agent mcp stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// startRaw starts `agent mcp` on home with pipes for its stdin and
// stdout, for tests and benchmarks that read the wire itself. It and what
// it started are killed when t ends; its stderr is logged if t failed.
func startRaw(t testing.TB, home string) (stdin io.WriteCloser, stdout io.Reader) {
	t.Helper()
	cmd := exec.Command(agentBin, "mcp")
	cmd.Env = env(home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent mcp stderr:\n%s", stderr.String())
		}
	})
	return stdin, out
}

type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// eventually polls cond for up to limit.
func eventually(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

var (
	sharedOnce sync.Once
	sharedDir  string
)

// sharedHome is one AGENT_HOME with probe and notes for the tests that do
// not change what is installed (building the plugin takes seconds).
func sharedHome(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir = filepath.Join(tmpRoot, "shared-home")
		for _, s := range []string{"probe", "notes"} {
			agent(t, sharedDir, "skill", "add", skillRepo(t), s, "--trust")
		}
	})
	return sharedDir
}
