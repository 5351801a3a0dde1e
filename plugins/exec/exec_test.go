//go:build unix

package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentskills/agent/sdk"
)

// Scripts used by the tool tests. They follow the conventions, except where
// a test needs them not to.
const (
	echoPy = `import json, os, sys
args = sys.argv[1:]
if "--help" in args:
    print("usage: echo.py [-h] [--json] words...\n\nEcho the words.")
    sys.exit(0)
if "--json" in args:
    args.remove("--json")
    env = dict(kv.split("=", 1) for kv in open("/proc/self/environ").read().split("\0") if kv)
    print(json.dumps({"args": args, "cwd": os.getcwd(), "env": env}))
else:
    print(" ".join(args))
`
	// groupPy starts a sleep and a python grandchild, records their pids in
	// the file named by its first argument, then either sleeps or exits.
	groupPy = `import subprocess, sys, time
a = subprocess.Popen(["sleep", "301"])
b = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(302)"])
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{a.pid} {b.pid}")
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
if sys.argv[2] == "sleep":
    time.sleep(300)
print("{}")
`
	bigPy       = "import sys\nsys.stdout.write('x' * (2 << 20))\n"
	stderrFlood = "import sys\nwhile True:\n    sys.stderr.write('e' * 65536)\n"
	nonJSONPy   = "import sys\nprint('no json here ' * 50)\nprint('careful: something odd', file=sys.stderr)\n"
	failPy      = "import sys\nprint('partial')\nprint('boom: the thing failed', file=sys.stderr)\nsys.exit(3)\n"
	badUTF8Py   = `import sys
sys.stdout.buffer.write(b"ok \xff\xfe end")
sys.stderr.buffer.write(b"err \xc3\x28 tail")
sys.exit(int(sys.argv[1]))
`
	depsPy  = "# /// script\n# dependencies = [\"httpx\"]\n# ///\nprint('{}')\n"
	badMeta = "# /// script\n# dependencies = \"httpx\"\n# ///\nprint('{}')\n"
)

// pythonPath is the real python3; testbed lookups return it for "python3"
// and search only the test's own folders for everything else, so a uv
// installed on the machine never leaks into a test.
func testLookPath(t testing.TB, dirs ...string) func(string) (string, error) {
	py := requirePython(t)
	return func(name string) (string, error) {
		if strings.Contains(name, "/") {
			return osexec.LookPath(name)
		}
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		if name == "python3" {
			return py, nil
		}
		return "", fmt.Errorf("%s: %w", name, osexec.ErrNotFound)
	}
}

// testbed is one skill folder served by the exec skill.
type testbed struct {
	t      testing.TB
	dir    string
	home   string
	svc    *service
	skill  sdk.Skill
	parent []string
}

type option func(*testbed, *Config)

func withSkill(mod func(*Skill)) option {
	return configOption(func(c *Config) { mod(&c.Skills[0]) })
}

func newTestbed(t testing.TB, files map[string]string, opts ...option) *testbed {
	t.Helper()
	root := t.TempDir()
	tb := &testbed{t: t, dir: filepath.Join(root, "My_Skill"), home: filepath.Join(root, "home")}
	if err := os.MkdirAll(filepath.Join(tb.dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tb.home, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(tb.dir, "scripts", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tb.parent = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tb.home, "LANG=C.UTF-8", "TMPDIR=" + tb.home,
		"SECRET_TOKEN=do-not-leak", "MY_API_KEY=k", "MY_OTHER=o", "EXACT=e", "EXACTLY=no",
	}
	// Scripts here write where their tests look (outside their folder):
	// the sandbox has tests of its own (sandbox_test.go), which turn it on.
	cfg := Config{Skills: []Skill{{Name: "My_Skill", Dir: tb.dir}}, NoSandbox: true}
	for _, o := range opts {
		o(tb, &cfg)
	}
	tb.svc = newService(cfg)
	tb.svc.run.lookPath = testLookPath(t)
	tb.svc.environ = func() []string { return tb.parent }
	for _, o := range opts {
		o(tb, nil) // options that touch the service see a nil Config
	}
	tb.skill = newSkill(tb.svc)
	return tb
}

// serviceOption changes the service after it is built.
func serviceOption(f func(*testbed)) option {
	return func(tb *testbed, c *Config) {
		if c == nil {
			f(tb)
		}
	}
}

func configOption(f func(*Config)) option {
	return func(_ *testbed, c *Config) {
		if c != nil {
			f(c)
		}
	}
}

func (tb *testbed) call(ctx context.Context, tool string, args any) (sdk.Result, *sdk.Error) {
	tb.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		tb.t.Fatal(err)
	}
	res, err := tb.skill.Invoke(ctx, tool, raw)
	if err == nil {
		return res, nil
	}
	var e *sdk.Error
	if !errors.As(err, &e) {
		tb.t.Fatalf("Invoke(%s) error %T %v is not an *sdk.Error", tool, err, err)
	}
	return res, e
}

func (tb *testbed) run(args map[string]any) (sdk.Result, *sdk.Error) {
	tb.t.Helper()
	if _, ok := args["skill_name"]; !ok {
		args["skill_name"] = "my-skill"
	}
	return tb.call(context.Background(), "script_run", args)
}

// ok runs script_run and fails the test on an error.
func (tb *testbed) ok(t testing.TB, args map[string]any) sdk.Result {
	t.Helper()
	res, e := tb.run(args)
	return mustOK(t, res, e)
}

func mustOK(t testing.TB, res sdk.Result, e *sdk.Error) sdk.Result {
	t.Helper()
	if e != nil {
		t.Fatalf("unexpected error %s: %s", e.Code, e.Message)
	}
	return res
}

func wantCode(t testing.TB, e *sdk.Error, code string, contains ...string) {
	t.Helper()
	if e == nil {
		t.Fatalf("no error, want %s", code)
	}
	if e.Code != code {
		t.Fatalf("error %s (%s), want %s", e.Code, e.Message, code)
	}
	for _, c := range contains {
		if !strings.Contains(e.Message, c) {
			t.Errorf("message %q does not contain %q", e.Message, c)
		}
	}
	if !utf8.ValidString(e.Message) {
		t.Errorf("message is not valid UTF-8: %q", e.Message)
	}
}

func TestScriptRunJSONAndText(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"echo.py": echoPy})
	res := tb.ok(t, map[string]any{"script_name": "echo", "args": []string{"a", "b c"}})
	var got struct {
		Args []string `json:"args"`
		Cwd  string   `json:"cwd"`
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("result %s: %v", res.Value, err)
	}
	if !reflect.DeepEqual(got.Args, []string{"a", "b c"}) || got.Cwd != filepath.Join(tb.dir, "scripts") {
		t.Errorf("script saw %+v", got)
	}
	if !strings.Contains(res.Message, "ran with python3 because uv was not found") {
		t.Errorf("message %q does not say python3 ran instead of uv", res.Message)
	}
	// The install advice is said once, by agent check, not in every result
	// a model reads.
	if strings.Contains(res.Message, "pipx") || strings.Contains(res.Message, "astral.sh") {
		t.Errorf("message %q repeats the uv install advice", res.Message)
	}

	res = tb.ok(t, map[string]any{"script_name": "echo", "args": []string{"x", "y"}, "json": false})
	var text string
	if err := json.Unmarshal(res.Value, &text); err != nil || text != "x y\n" {
		t.Errorf("json=false result %s (%v), want the text \"x y\\n\"", res.Value, err)
	}

	// The schema publishes json as a plain boolean (a caller leaves it out
	// for the default), yet an explicit null is still the default.
	infos, err := tb.skill.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if info.Name != "script_run" {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(info.InputSchema, &schema); err != nil || schema.Properties["json"].Type != "boolean" {
			t.Errorf("script_run's json property in %s (%v), want type boolean", info.InputSchema, err)
		}
	}
	res = tb.ok(t, map[string]any{"script_name": "echo", "args": []string{"n"}, "json": nil})
	if err := json.Unmarshal(res.Value, &got); err != nil || !reflect.DeepEqual(got.Args, []string{"n"}) {
		t.Errorf("json=null result %s (%v), want the parsed JSON", res.Value, err)
	}
}

func TestScriptRunNames(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"status.py": "print('{\"ok\": true}')\n", "../outside.py": "print('{}')\n"})
	if err := os.Symlink(filepath.Join(tb.dir, "scripts", "status.py"), filepath.Join(tb.dir, "scripts", "link.py")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"status", "Status", "status.py", "STATUS.PY"} {
		res := tb.ok(t, map[string]any{"script_name": name})
		if string(res.Value) != `{"ok":true}` {
			t.Errorf("%s: result %s", name, res.Value)
		}
	}
	tests := []struct{ name, skill, script, code, msg string }{
		{"parent path", "my-skill", "../outside", CodeInvalidName, "without folders"},
		{"parent path with .py", "my-skill", "../outside.py", CodeInvalidName, ".."},
		{"slash", "my-skill", "scripts/status", CodeInvalidName, "plain name"},
		{"empty", "my-skill", "", CodeInvalidName, "empty"},
		{"hidden", "my-skill", ".status", CodeInvalidName, "dot"},
		{"symbolic link", "my-skill", "link", CodeNotFound, "symbolic link"},
		{"unknown script", "my-skill", "nope", CodeNotFound, "available: status"},
		{"unknown skill", "other", "status", CodeNotFound, "active: My_Skill"},
		{"bad skill name", "../x", "status", CodeInvalidName, "not a skill name"},
	}
	for _, tc := range tests {
		_, e := tb.run(map[string]any{"skill_name": tc.skill, "script_name": tc.script})
		t.Run(tc.name, func(t *testing.T) { wantCode(t, e, tc.code, tc.msg) })
	}
}

func TestScriptRunErrors(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{
		"echo.py": echoPy, "nonjson.py": nonJSONPy, "fail.py": failPy, "deps.py": depsPy, "badmeta.py": badMeta,
	})
	many := make([]string, 101)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	tests := []struct {
		name string
		in   map[string]any
		code string
		msg  []string
	}{
		{"101 arguments", map[string]any{"script_name": "echo", "args": many}, CodeArgsTooLarge, []string{"101 arguments", "at most 100"}},
		{"5 KiB of arguments", map[string]any{"script_name": "echo", "args": []string{strings.Repeat("a", 3000), strings.Repeat("b", 2120)}}, CodeArgsTooLarge, []string{"5120 bytes", "4096"}},
		{"NUL in an argument", map[string]any{"script_name": "echo", "args": []string{"a\x00b"}}, sdk.CodeInvalidArgs, []string{"NUL"}},
		{"not JSON with json=true", map[string]any{"script_name": "nonjson"}, CodeParseError, []string{
			strconv.Quote(strings.Repeat("no json here ", 50)[:200] + "…"), "careful: something odd", "json=false",
		}},
		{"exit code 3", map[string]any{"script_name": "fail"}, CodeExecutionFailed, []string{"exited with code 3", "boom: the thing failed"}},
		{"dependencies without uv", map[string]any{"script_name": "deps"}, CodeUVNotFound, []string{
			"httpx", "need uv", "'agent check' says how to install uv",
		}},
		{"malformed metadata", map[string]any{"script_name": "badmeta"}, CodeExecutionFailed, []string{"badmeta.py", "dependencies must be an array"}},
		{"env not allowed", map[string]any{"script_name": "echo", "env": map[string]string{"SECRET_TOKEN": "x"}}, CodePermissionDenied, []string{"SECRET_TOKEN", "permissions.env"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, e := tb.run(tc.in)
			wantCode(t, e, tc.code, tc.msg...)
		})
	}
	t.Run("limits are inclusive", func(t *testing.T) {
		t.Parallel()
		hundred := many[:100]
		tb.ok(t, map[string]any{"script_name": "echo", "args": hundred})
		tb.ok(t, map[string]any{"script_name": "echo", "args": []string{strings.Repeat("a", 4096)}})
	})
}

func TestNoUVAndNoPython(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"echo.py": echoPy}, serviceOption(func(tb *testbed) {
		tb.svc.run.lookPath = func(name string) (string, error) { return "", osexec.ErrNotFound }
	}))
	_, e := tb.run(map[string]any{"script_name": "echo"})
	wantCode(t, e, CodeUVNotFound, "python3", "'agent check' says how to install uv")
}

// gone waits until pid has exited (it may linger as a zombie until init
// reaps it) and fails when it is still running the marked command.
func gone(t testing.TB, pid int, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			return // gone, or the pid now belongs to someone else
		}
		state := stat[bytes.LastIndexByte(stat, ')')+2]
		if state == 'Z' || state == 'X' {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process %d (%q) is still running (state %c)", pid, cmdline, state)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPids(t testing.TB, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the script did not record its children: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	return pids
}

func checkGroupGone(t testing.TB, pidFile string) {
	t.Helper()
	pids := readPids(t, pidFile)
	gone(t, pids[0], "301")
	gone(t, pids[1], "302")
}

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	// 20s: under load (the portable suite beside others on 2 cores) a
	// python3 that starts two children took more than 3s to write pids,
	// and once, at load 13, more than 10s.
	tb := newTestbed(t, map[string]string{"group.py": groupPy}, configOption(func(c *Config) { c.Timeout = 20 * time.Second }))
	pidFile := filepath.Join(t.TempDir(), "pids")
	_, e := tb.run(map[string]any{"script_name": "group", "args": []string{pidFile, "sleep"}})
	wantCode(t, e, CodeTimeout, "did not finish within 20s", "AGENT_SCRIPT_TIMEOUT")
	checkGroupGone(t, pidFile)
}

func TestLeftoverChildrenAreKilled(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"group.py": groupPy})
	pidFile := filepath.Join(t.TempDir(), "pids")
	tb.ok(t, map[string]any{"script_name": "group", "args": []string{pidFile, "exit"}})
	checkGroupGone(t, pidFile)
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"group.py": groupPy})
	pidFile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		appears(pidFile)
		cancel()
	}()
	_, e := tb.call(ctx, "script_run", map[string]any{"skill_name": "my-skill", "script_name": "group", "args": []string{pidFile, "sleep"}})
	wantCode(t, e, sdk.CodeCanceled)
	checkGroupGone(t, pidFile)

	// A deadline is a timeout, and says whose deadline it was.
	pidFile = filepath.Join(t.TempDir(), "pids")
	dl := &expiring{Context: context.Background(), done: make(chan struct{})}
	go func() {
		appears(pidFile)
		close(dl.done)
	}()
	_, e = tb.call(dl, "script_run", map[string]any{"skill_name": "my-skill", "script_name": "group", "args": []string{pidFile, "sleep"}})
	wantCode(t, e, CodeTimeout, "caller's deadline")
	checkGroupGone(t, pidFile)
}

// expiring is a context whose deadline passes when done is closed, so a
// test controls the moment without a clock.
type expiring struct {
	context.Context
	done chan struct{}
}

func (c *expiring) Done() <-chan struct{} { return c.done }

func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestOutputLimits(t *testing.T) {
	t.Parallel()
	// big.py ends by itself: its limit only has to outlast a loaded
	// machine. flood.py never ends: its limit is how long the test waits,
	// and long enough for a python3 to start at load 13 (5s was not).
	tb := newTestbed(t, map[string]string{"big.py": bigPy},
		configOption(func(c *Config) { c.Timeout = 2 * time.Minute }))
	flood := newTestbed(t, map[string]string{"flood.py": stderrFlood},
		configOption(func(c *Config) { c.Timeout = 15 * time.Second }))
	t.Run("2 MiB of stdout is truncated at 1 MiB with a warning", func(t *testing.T) {
		t.Parallel()
		res := tb.ok(t, map[string]any{"script_name": "big", "json": false})
		var text string
		if err := json.Unmarshal(res.Value, &text); err != nil {
			t.Fatal(err)
		}
		if len(text) != DefaultMaxOutput || strings.Trim(text, "x") != "" {
			t.Errorf("result has %d bytes, want %d", len(text), DefaultMaxOutput)
		}
		if !strings.Contains(res.Message, "truncated") || !strings.Contains(res.Message, "2097152 bytes") || !strings.Contains(res.Message, "AGENT_MAX_SCRIPT_OUTPUT") {
			t.Errorf("message %q has no truncation warning", res.Message)
		}
	})
	t.Run("truncated output with json=true is a parse error that says so", func(t *testing.T) {
		t.Parallel()
		_, e := tb.run(map[string]any{"script_name": "big"})
		wantCode(t, e, CodeParseError, "truncated at 1048576 bytes")
		if len(e.Message) > 1500 {
			t.Errorf("message is %d bytes long", len(e.Message))
		}
	})
	t.Run("endless stderr keeps only the tail", func(t *testing.T) {
		t.Parallel()
		_, e := flood.run(map[string]any{"script_name": "flood"})
		wantCode(t, e, CodeTimeout, "stderr (last 500 bytes): eeee")
		if n := strings.Count(e.Message, "e"); n < 500 || n > 600 {
			t.Errorf("message carries %d bytes of stderr, want the last 500", n)
		}
	})
}

func TestWritersAreBounded(t *testing.T) {
	t.Parallel()
	c := &capWriter{max: 1000}
	s := &tailWriter{n: stderrTail}
	chunk := bytes.Repeat([]byte("0123456789"), 3277)
	for i := 0; i < 2000; i++ { // 64 MiB each
		c.Write(chunk)
		s.Write(chunk[:i%len(chunk)])
	}
	if c.buf.Len() != 1000 || c.buf.Cap() > 64<<10 || c.total != int64(2000*len(chunk)) {
		t.Errorf("capWriter kept %d bytes (cap %d), counted %d", c.buf.Len(), c.buf.Cap(), c.total)
	}
	if len(s.bytes()) != stderrTail || cap(s.buf) > 64<<10 {
		t.Errorf("tailWriter kept %d bytes (cap %d)", len(s.bytes()), cap(s.buf))
	}
	s = &tailWriter{n: 5}
	for _, w := range []string{"ab", "cd", "efg"} {
		s.Write([]byte(w))
	}
	if string(s.bytes()) != "cdefg" {
		t.Errorf("tail = %q, want cdefg", s.bytes())
	}
}

func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"bad.py": badUTF8Py})
	res := tb.ok(t, map[string]any{"script_name": "bad", "args": []string{"0"}, "json": false})
	var text string
	if err := json.Unmarshal(res.Value, &text); err != nil || text != "ok \uFFFD end" {
		t.Errorf("result %s (%v)", res.Value, err)
	}
	_, e := tb.run(map[string]any{"script_name": "bad", "args": []string{"1"}, "json": false})
	wantCode(t, e, CodeExecutionFailed, "err \uFFFD( tail")
	_, e = tb.run(map[string]any{"script_name": "bad", "args": []string{"0"}})
	wantCode(t, e, CodeParseError, "ok \uFFFD end")
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		in              string
		cutEnd, cutHead bool
		want            string
	}{
		{"valid", "héllo", false, false, "héllo"},
		{"invalid replaced", "a\xffb", false, false, "a\uFFFDb"},
		{"rune cut at the end is dropped", "ab\xe2\x82", true, false, "ab"},
		{"rune cut at the end kept when not cut", "ab\xe2\x82", false, false, "ab\uFFFD"},
		{"complete rune at the end stays", "ab€", true, false, "ab€"},
		{"rune cut at the start is dropped", "\x82\xacab", false, true, "ab"},
	}
	for _, tc := range tests {
		if got := text([]byte(tc.in), tc.cutEnd, tc.cutHead); got != tc.want {
			t.Errorf("%s: text(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func envOf(t testing.TB, res sdk.Result) map[string]string {
	t.Helper()
	var got struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("result %s: %v", res.Value, err)
	}
	checkPycachePrefix(t, got.Env["PYTHONPYCACHEPREFIX"])
	delete(got.Env, "PYTHONPYCACHEPREFIX")
	return got.Env
}

// checkPycachePrefix checks that a script ran with its bytecode in a temp
// folder of its run, never beside the skill's files (SPEC §12).
func checkPycachePrefix(t testing.TB, p string) {
	t.Helper()
	if filepath.Base(p) != "pycache" || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "agent-script-") {
		t.Errorf("PYTHONPYCACHEPREFIX = %q; want a pycache folder in the run's temp folder", p)
	}
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"echo.py": echoPy}, withSkill(func(s *Skill) { s.Env = []string{"MY_*", "EXACT"} }))
	base := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tb.home, "LANG": "C.UTF-8", "TMPDIR": tb.home, "PYTHONDONTWRITEBYTECODE": "1"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	t.Run("allowed names only, no secret by pattern", func(t *testing.T) {
		got := envOf(t, tb.ok(t, map[string]any{"script_name": "echo"}))
		want := with(map[string]string{"MY_OTHER": "o", "EXACT": "e"})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("script environment = %v, want %v", got, want)
		}
	})
	t.Run("a secret named in full", func(t *testing.T) {
		tb := newTestbed(t, map[string]string{"echo.py": echoPy}, withSkill(func(s *Skill) { s.Env = []string{"MY_*", "MY_API_KEY"} }))
		got := envOf(t, tb.ok(t, map[string]any{"script_name": "echo"}))
		want := with(map[string]string{"MY_API_KEY": "k", "MY_OTHER": "o", "HOME": tb.home, "TMPDIR": tb.home})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("script environment = %v, want %v", got, want)
		}
	})
	t.Run("a secret named by pass_env", func(t *testing.T) {
		tb := newTestbed(t, map[string]string{"echo.py": echoPy}, withSkill(func(s *Skill) { s.Env = []string{"*"} }),
			configOption(func(c *Config) { c.PassEnv = []string{"SECRET_TOKEN"} }))
		got := envOf(t, tb.ok(t, map[string]any{"script_name": "echo"}))
		want := with(map[string]string{"SECRET_TOKEN": "do-not-leak", "MY_OTHER": "o", "EXACT": "e", "EXACTLY": "no", "HOME": tb.home, "TMPDIR": tb.home})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("script environment = %v, want %v", got, want)
		}
	})
	t.Run("requested values that are allowed", func(t *testing.T) {
		got := envOf(t, tb.ok(t, map[string]any{"script_name": "echo", "env": map[string]string{"MY_NEW": "1", "MY_API_KEY": "override"}}))
		want := with(map[string]string{"MY_API_KEY": "override", "MY_OTHER": "o", "EXACT": "e", "MY_NEW": "1"})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("script environment = %v, want %v", got, want)
		}
	})
	for _, name := range []string{"SECRET_TOKEN", "EXACTLY", "PATH", "MY"} {
		_, e := tb.run(map[string]any{"script_name": "echo", "env": map[string]string{name: "x"}})
		t.Run("denied "+name, func(t *testing.T) { wantCode(t, e, CodePermissionDenied, name, "MY_*, EXACT") })
	}
	t.Run("no allow-list", func(t *testing.T) {
		tb := newTestbed(t, map[string]string{"echo.py": echoPy})
		want := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tb.home, "LANG": "C.UTF-8", "TMPDIR": tb.home, "PYTHONDONTWRITEBYTECODE": "1"}
		if got := envOf(t, tb.ok(t, map[string]any{"script_name": "echo"})); !reflect.DeepEqual(got, want) {
			t.Errorf("script environment = %v, want %v", got, want)
		}
		_, e := tb.run(map[string]any{"script_name": "echo", "env": map[string]string{"MY_API_KEY": "x"}})
		wantCode(t, e, CodePermissionDenied, "allows no environment variables")
	})
}

// recordingUV writes a stand-in for uv into dir. `uv sync --script S`
// records its argv, working directory and exact environment (from /proc,
// so nothing a shell adds leaks in) under rec, and makes an environment
// in uv's cache whose python links to the real one; `uv python find
// --script S` names that python. Anything else fails: scripts never run
// through `uv run`. With rec "" it records nothing (it may run sandboxed).
func recordingUV(t testing.TB, dir, rec string) string {
	t.Helper()
	py, err := filepath.EvalSymlinks(requirePython(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "uv")
	src := fmt.Sprintf(`#!/bin/sh
env="${UV_CACHE_DIR:-$HOME/.cache/uv}/environments-v2/stand-in"
case "$1 $2" in
"sync --script")
	printf '%%s\0' "$0" "$@" > '%[1]s.argv'
	pwd -P > '%[1]s.cwd'
	cat /proc/$$/environ > '%[1]s.env'
	mkdir -p "$env/bin" && ln -sfn '%[2]s' "$env/bin/python" &&
	printf 'home = %%s\ninclude-system-site-packages = false\n' '%[3]s' > "$env/pyvenv.cfg" ;;
"python find")
	echo "$env/bin/python" ;;
*)
	echo "unexpected: uv $*" >&2; exit 2 ;;
esac
`, rec, py, filepath.Dir(py))
	if err := os.WriteFile(p, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

type recording struct {
	argv []string
	cwd  string
	env  []string
}

func readRecording(t testing.TB, rec string) recording {
	t.Helper()
	read := func(ext string) string {
		b, err := os.ReadFile(rec + ext)
		if err != nil {
			t.Fatalf("the uv stand-in did not run: %v", err)
		}
		return string(b)
	}
	r := recording{
		argv: strings.Split(strings.TrimSuffix(read(".argv"), "\x00"), "\x00"),
		cwd:  strings.TrimSpace(read(".cwd")),
	}
	for _, kv := range strings.Split(strings.TrimSuffix(read(".env"), "\x00"), "\x00") {
		if v, ok := strings.CutPrefix(kv, "PYTHONPYCACHEPREFIX="); ok {
			checkPycachePrefix(t, v)
			continue
		}
		r.env = append(r.env, kv)
	}
	sort.Strings(r.env)
	return r
}

func TestUVCommandLine(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	onPath := recordingUV(t, filepath.Join(tmp, "bin"), filepath.Join(tmp, "path"))
	configured := recordingUV(t, filepath.Join(tmp, "opt"), filepath.Join(tmp, "configured"))
	files := map[string]string{"echo.py": echoPy, "deps.py": depsPy}
	pathOnly := serviceOption(func(tb *testbed) { tb.svc.run.lookPath = testLookPath(t, filepath.Join(tmp, "bin")) })

	t.Run("uv on PATH: exact argv, cwd and environment", func(t *testing.T) {
		tb := newTestbed(t, files, pathOnly, withSkill(func(s *Skill) { s.Env = []string{"MY_API_KEY"} }))
		res := tb.ok(t, map[string]any{"script_name": "Echo.py", "args": []string{"a", "b"}})
		script := filepath.Join(tb.dir, "scripts", "echo.py")
		rec := readRecording(t, filepath.Join(tmp, "path"))
		if want := []string{onPath, "sync", "--script", script}; !reflect.DeepEqual(rec.argv, want) {
			t.Errorf("argv = %q, want %q", rec.argv, want)
		}
		if rec.cwd != filepath.Join(tb.dir, "scripts") {
			t.Errorf("cwd = %q", rec.cwd)
		}
		want := []string{"HOME=" + tb.home, "LANG=C.UTF-8", "MY_API_KEY=k", "PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1", "TMPDIR=" + tb.home}
		if !reflect.DeepEqual(rec.env, want) {
			t.Errorf("environment = %q, want %q", rec.env, want)
		}
		// The script itself ran with the environment's python, as uv
		// run would have run it.
		var got struct {
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		}
		if err := json.Unmarshal(res.Value, &got); err != nil {
			t.Fatalf("%s: %v", res.Value, err)
		}
		venv := filepath.Join(tb.home, ".cache", "uv", "environments-v2", "stand-in")
		if !reflect.DeepEqual(got.Args, []string{"a", "b"}) || got.Env["VIRTUAL_ENV"] != venv ||
			got.Env["PATH"] != filepath.Join(venv, "bin")+":/usr/local/bin:/usr/bin:/bin" {
			t.Errorf("the script ran with args %q and environment %v", got.Args, got.Env)
		}
		if strings.Contains(res.Message, "python3") {
			t.Errorf("message %q mentions python3 although uv ran", res.Message)
		}
	})
	t.Run("json=false leaves out --json; dependencies are fine with uv", func(t *testing.T) {
		tb := newTestbed(t, files, pathOnly)
		tb.ok(t, map[string]any{"script_name": "deps", "args": []string{"--x"}, "json": false})
		rec := readRecording(t, filepath.Join(tmp, "path"))
		if want := []string{onPath, "sync", "--script", filepath.Join(tb.dir, "scripts", "deps.py")}; !reflect.DeepEqual(rec.argv, want) {
			t.Errorf("argv = %q, want %q", rec.argv, want)
		}
	})
	t.Run("AGENT_UV wins over PATH", func(t *testing.T) {
		tb := newTestbed(t, files, pathOnly, configOption(func(c *Config) { c.UV = configured }))
		tb.ok(t, map[string]any{"script_name": "echo"})
		if rec := readRecording(t, filepath.Join(tmp, "configured")); rec.argv[0] != configured {
			t.Errorf("ran %q, want the configured %q", rec.argv[0], configured)
		}
	})
	t.Run("an unusable AGENT_UV falls back to PATH", func(t *testing.T) {
		tb := newTestbed(t, files, pathOnly, configOption(func(c *Config) { c.UV = filepath.Join(tmp, "missing", "uv") }))
		tb.ok(t, map[string]any{"script_name": "echo"})
	})
	t.Run("an unusable AGENT_UV without uv on PATH is named", func(t *testing.T) {
		tb := newTestbed(t, files, configOption(func(c *Config) { c.UV = filepath.Join(tmp, "missing", "uv") }))
		_, e := tb.run(map[string]any{"script_name": "deps"})
		wantCode(t, e, CodeUVNotFound, "AGENT_UV="+filepath.Join(tmp, "missing", "uv"))
	})
}

func TestScriptList(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"b.py": "", "a.py": "", "_hidden.py": "", "bad.py": badMeta}, func(tb *testbed, c *Config) {
		if c != nil {
			c.Skills[0].Ignore = []string{"_*"}
			c.Skills = append(c.Skills, Skill{Name: "empty", Dir: filepath.Join(tb.dir, "..", "nothing")})
		}
	})
	res, e := tb.call(context.Background(), "script_list", map[string]any{})
	mustOK(t, res, e)
	var got map[string][]ListEntry
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(tb.dir, "scripts")
	want := map[string][]ListEntry{
		"My_Skill": {{Name: "a", Path: filepath.Join(s, "a.py")}, {Name: "b", Path: filepath.Join(s, "b.py")}},
		"empty":    {},
	}
	if len(got["My_Skill"]) != 3 || got["My_Skill"][2].Name != "bad" || !strings.Contains(got["My_Skill"][2].Error, "dependencies must be") {
		t.Fatalf("script_list = %s", res.Value)
	}
	got["My_Skill"] = got["My_Skill"][:2]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("script_list = %v, want %v", got, want)
	}
	if res.Message != "3 scripts in 2 skills" {
		t.Errorf("message = %q", res.Message)
	}
	res, e = tb.call(context.Background(), "script_list", map[string]any{"skill_name": "EMPTY"})
	if mustOK(t, res, e); string(res.Value) != `{"empty":[]}` {
		t.Errorf("script_list(EMPTY) = %s", res.Value)
	}
	_, e = tb.call(context.Background(), "script_list", map[string]any{"skill_name": "nope"})
	wantCode(t, e, CodeNotFound, "nope")
}

const helpPy = `import sys
with open(%q, "a") as f:
    f.write("ran\n")
print("Fetch the status.\n\n  usage: status.py [-h] [--json] NAME\n\nversion %d")
print("usage: ignored second line")
`

func TestScriptHelpCache(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "runs")
	cache := filepath.Join(t.TempDir(), "state", "help")
	tb := newTestbed(t, map[string]string{"status.py": fmt.Sprintf(helpPy, counter, 1), "fail.py": failPy},
		configOption(func(c *Config) { c.CacheDir = cache }))
	runs := func() int {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "ran")
	}
	help := func(tb *testbed) (HelpResult, string) {
		t.Helper()
		res, e := tb.call(context.Background(), "script_help", map[string]any{"skill_name": "my_skill", "script_name": "Status"})
		mustOK(t, res, e)
		var h HelpResult
		if err := json.Unmarshal(res.Value, &h); err != nil {
			t.Fatal(err)
		}
		return h, res.Message
	}
	h, msg := help(tb)
	if h.Usage != "usage: status.py [-h] [--json] NAME" || !strings.Contains(h.HelpText, "version 1") {
		t.Errorf("help = %+v", h)
	}
	if strings.Contains(msg, "cached") || runs() != 1 {
		t.Errorf("first help: message %q, %d runs", msg, runs())
	}
	if _, msg = help(tb); !strings.Contains(msg, "cached") || runs() != 1 {
		t.Errorf("second help: message %q, %d runs; want it from the cache", msg, runs())
	}
	// A new plugin process finds the help on disk.
	fresh := newTestbed(t, nil, configOption(func(c *Config) { c.CacheDir = cache; c.Skills[0].Dir = tb.dir }))
	if _, msg = help(fresh); !strings.Contains(msg, "cached") || runs() != 1 {
		t.Errorf("help in a new process: message %q, %d runs; want it from the disk cache", msg, runs())
	}
	// Editing the script changes its hash, so the help runs again.
	if err := os.WriteFile(filepath.Join(tb.dir, "scripts", "status.py"), []byte(fmt.Sprintf(helpPy, counter, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, _ = help(tb); !strings.Contains(h.HelpText, "version 2") || runs() != 2 {
		t.Errorf("help after an edit = %+v, %d runs", h, runs())
	}
	// Failures are reported, not cached.
	for i := 0; i < 2; i++ {
		_, e := tb.call(context.Background(), "script_help", map[string]any{"skill_name": "my-skill", "script_name": "fail"})
		wantCode(t, e, CodeExecutionFailed, "exited with code 3")
	}
	// Without a cache folder the help still works, from memory only.
	mem := newTestbed(t, map[string]string{"echo.py": echoPy})
	res, e := mem.call(context.Background(), "script_help", map[string]any{"skill_name": "my-skill", "script_name": "echo"})
	if mustOK(t, res, e); !strings.Contains(string(res.Value), `"usage":"usage: echo.py [-h] [--json] words..."`) {
		t.Errorf("help = %s", res.Value)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	infos, err := New(Config{}).Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
		if in.Description == "" || !json.Valid(in.InputSchema) {
			t.Errorf("tool %s: description %q, schema %s", in.Name, in.Description, in.InputSchema)
		}
	}
	if !reflect.DeepEqual(names, []string{"script_list", "script_help", "script_run"}) {
		t.Errorf("tools = %v", names)
	}
}

func TestLinkedScriptsFolder(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"evil.py": "print('{}')\n"})
	tb := newTestbed(t, nil)
	if err := os.Remove(filepath.Join(tb.dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tb.dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	_, e := tb.run(map[string]any{"script_name": "evil"})
	wantCode(t, e, CodeNotFound, "symbolic link")
	res, e := tb.call(context.Background(), "script_list", map[string]any{})
	if mustOK(t, res, e); string(res.Value) != `{"My_Skill":[]}` || !strings.Contains(res.Message, "symbolic link") {
		t.Errorf("script_list = %s, %q", res.Value, res.Message)
	}
}

func TestConfigJSON(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Skills:  []Skill{{Name: "a", Dir: "/d", Scripts: []string{"s"}, Ignore: []string{"_*"}, Env: []string{"K_*"}}},
		Timeout: 90 * time.Second, MaxOutput: 10, UV: "/bin/uv", CacheDir: "/c",
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"skills":[{"name":"a","dir":"/d","scripts":["s"],"ignore":["_*"],"env":["K_*"]}],"timeout":90000000000,"max_output":10,"uv":"/bin/uv","cache_dir":"/c"}`
	if string(b) != want {
		t.Errorf("Config JSON = %s, want %s", b, want)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	tb := newTestbed(t, map[string]string{"echo.py": echoPy, "help.py": echoPy})
	errs := make(chan *sdk.Error, 16)
	for i := 0; i < 8; i++ {
		go func() {
			_, e := tb.run(map[string]any{"script_name": "echo", "args": []string{strconv.Itoa(i)}})
			errs <- e
		}()
		go func() {
			_, e := tb.call(context.Background(), "script_help", map[string]any{"skill_name": "my-skill", "script_name": "help"})
			errs <- e
		}()
	}
	for i := 0; i < 16; i++ {
		if e := <-errs; e != nil {
			t.Errorf("concurrent call: %s: %s", e.Code, e.Message)
		}
	}
}

func TestFindUV(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, why := FindUV(self); p != self || why != "" {
		t.Errorf("FindUV(executable) = %q, %q", p, why)
	}
	if _, why := FindUV(filepath.Join(t.TempDir(), "no-uv")); !strings.Contains(why, "AGENT_UV=") {
		// uv may be on this machine's PATH; then why is empty.
		if p, _ := osexec.LookPath("uv"); p == "" {
			t.Errorf("FindUV(missing) why = %q; want it to name AGENT_UV", why)
		}
	}
}
