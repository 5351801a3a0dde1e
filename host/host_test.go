//go:build unix

package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentskills/agent/internal/ground/platform"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/sdk"
)

func sdkErr(t *testing.T, err error, code string) *sdk.Error {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *sdk.Error %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("error code = %q (%s), want %q", e.Code, e.Message, code)
	}
	return e
}

func pidOf(t *testing.T, h *Host, name string) int {
	t.Helper()
	res, err := h.Invoke(context.Background(), name, "pid", nil)
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	pid, err := strconv.Atoi(string(res.Value))
	if err != nil {
		t.Fatalf("pid result %q: %v", res.Value, err)
	}
	return pid
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp())
	tests := []struct {
		name     string
		tool     string
		args     string
		want     string
		wantNote string
		wantCode string
	}{
		{name: "result", tool: "echo", args: `{"text":"hi"}`, want: `{"text":"hi"}`},
		{name: "note", tool: "echo", args: `{"text":"hi","note":"careful"}`, want: `{"text":"hi"}`, wantNote: "careful"},
		{name: "structured tool error", tool: "fail", args: `{"code":"not_found","message":"nope"}`, wantCode: "not_found"},
		{name: "plain tool error", tool: "fail", args: `{"message":"boom"}`, wantCode: sdk.CodeToolFailed},
		{name: "invalid args", tool: "echo", args: `{"text":3}`, wantCode: sdk.CodeInvalidArgs},
		{name: "missing arg", tool: "echo", args: `{}`, wantCode: sdk.CodeInvalidArgs},
		{name: "unknown tool", tool: "nope", args: `{}`, wantCode: sdk.CodeUnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.Invoke(context.Background(), "tp", tc.tool, json.RawMessage(tc.args))
			if tc.wantCode != "" {
				sdkErr(t, err, tc.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != tc.want || res.Message != tc.wantNote {
				t.Errorf("got %s %q, want %s %q", res.Value, res.Message, tc.want, tc.wantNote)
			}
		})
	}
}

func TestUnknownPlugin(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	_, err := h.Invoke(context.Background(), "ghost", "x", nil)
	if !errors.Is(err, ErrUnknownPlugin) {
		t.Fatalf("err = %v, want ErrUnknownPlugin", err)
	}
}

func TestLazyStart(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp())
	if pid := h.PID("tp"); pid != 0 {
		t.Fatalf("Register started a process (pid %d)", pid)
	}
	if pid := pidOf(t, h, "tp"); pid != h.PID("tp") {
		t.Fatalf("PID() = %d, plugin says %d", h.PID("tp"), pid)
	}
}

func TestConcurrentInvokesShareOneProcess(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp())
	const workers, calls = 16, 25
	var wg sync.WaitGroup
	pids := make([][]string, workers)
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				text := strconv.Itoa(w*1000 + i)
				res, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"`+text+`"}`))
				if err != nil {
					errs <- err
					return
				}
				if string(res.Value) != `{"text":"`+text+`"}` {
					errs <- errors.New("crossed answer: " + string(res.Value))
				}
				res, err = h.Invoke(context.Background(), "tp", "pid", nil)
				if err != nil {
					errs <- err
					return
				}
				pids[w] = append(pids[w], string(res.Value))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var all []string
	for _, p := range pids {
		all = append(all, p...)
	}
	slices.Sort(all)
	if all = slices.Compact(all); len(all) != 1 {
		t.Errorf("calls went to %d processes %v, want 1", len(all), all)
	}
}

func TestCrashRestarts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args, wantMsg string
	}{
		{name: "panic", tool: "panic", args: `{}`, wantMsg: "panic on request"},
		{name: "exit", tool: "exit", args: `{"code":7}`, wantMsg: "exit status 7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t)
			h.Register(tp())
			before := pidOf(t, h, "tp")
			_, err := h.Invoke(context.Background(), "tp", tc.tool, json.RawMessage(tc.args))
			e := sdkErr(t, err, sdk.CodePluginCrashed)
			if !strings.Contains(e.Message, tc.wantMsg) {
				t.Errorf("message %q does not mention %q", e.Message, tc.wantMsg)
			}
			after := pidOf(t, h, "tp")
			if after == before {
				t.Errorf("plugin was not restarted (pid %d)", after)
			}
			if _, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"ok"}`)); err != nil {
				t.Errorf("call after restart: %v", err)
			}
		})
	}
}

// TestDeadlineCancelsThenGraceKills: a deadline cancels the call in the
// plugin at once; the plugin is killed only if its handler ignores that
// for the grace period, and then its other calls end as plugin_crashed.
//
// Protocol 2 sends the deadline with the request, protocol 1 (a plugin
// built before it) in metadata; either way the handler must see it.
func TestDeadlineCancelsThenGraceKills(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	for _, tc := range []struct {
		protocol string
		ignore   bool
	}{{"2", false}, {"2", true}, {"1", false}, {"1", true}} {
		ignore := tc.ignore
		t.Run("protocol="+tc.protocol+"/ignore_cancel="+strconv.FormatBool(ignore), func(t *testing.T) {
			t.Parallel()
			h := newHost(t, WithCancelGrace(grace))
			h.Register(tp("TESTPLUGIN_PROTOCOL=" + tc.protocol))
			before := pidOf(t, h, "tp")
			// Another call in flight, without a deadline.
			other := make(chan error, 1)
			go func() {
				_, err := h.Invoke(context.Background(), "tp", "hang", json.RawMessage(`{"ignore_cancel":true}`))
				other <- err
			}()
			args, _ := json.Marshal(map[string]bool{"ignore_cancel": ignore})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := h.Invoke(ctx, "tp", "hang", args)
			sdkErr(t, err, sdk.CodeTimeout)
			if !ignore {
				time.Sleep(2 * grace) // past the grace period
				if after := pidOf(t, h, "tp"); after != before {
					t.Errorf("a plugin that honoured the cancel was restarted (%d -> %d)", before, after)
				}
				res, err := h.Invoke(context.Background(), "tp", "canceled", nil)
				if err != nil || string(res.Value) == "0" {
					t.Errorf("the cancel did not reach the handler: %s %v", res.Value, err)
				}
				return
			}
			if !gone(t, before, 10*time.Second) {
				t.Fatalf("plugin %d that ignores cancellation still runs", before)
			}
			select {
			case err := <-other:
				sdkErr(t, err, sdk.CodePluginCrashed)
			case <-time.After(10 * time.Second):
				t.Fatal("the other call in flight did not end")
			}
			if after := pidOf(t, h, "tp"); after == before {
				t.Errorf("killed plugin %d still serving", before)
			}
		})
	}
}

func TestCallerDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := h.Invoke(ctx, "tp", "hang", json.RawMessage(`{}`))
	sdkErr(t, err, sdk.CodeTimeout)
	if _, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatalf("next call: %v", err)
	}
}

func TestCancelReachesPlugin(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp())
	before := pidOf(t, h, "tp")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	_, err := h.Invoke(ctx, "tp", "hang", json.RawMessage(`{}`))
	sdkErr(t, err, sdk.CodeCanceled)
	// The handler sees its context end shortly after; poll for it.
	var n string
	for range 500 {
		res, err := h.Invoke(context.Background(), "tp", "canceled", nil)
		if err != nil {
			t.Fatal(err)
		}
		if n = string(res.Value); n == "1" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n != "1" {
		t.Fatalf("plugin saw %s canceled calls, want 1", n)
	}
	if after := pidOf(t, h, "tp"); after != before {
		t.Errorf("cancel restarted the plugin (%d -> %d)", before, after)
	}
}

func TestTamperedBinaryRefusedBeforeItRuns(t *testing.T) {
	t.Parallel()
	path := copyPlugin(t)
	sum := fileSHA(t, path)
	marker := filepath.Join(t.TempDir(), "ran")
	// Replace the plugin with a script that would leave a marker.
	if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	h.Register(Plugin{Name: "hello", Path: path, SHA256: sum})
	_, err := h.Invoke(context.Background(), "hello", "echo", json.RawMessage(`{"text":"x"}`))
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("err = %v, want ErrTampered", err)
	}
	for _, want := range []string{`"hello"`, path, "modified after install", "refusing to run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("tampered binary ran")
	}
}

func TestFingerprintFastPath(t *testing.T) {
	if !sealedCopies {
		t.Skip("the fallback (portable tag) has no read leases: every launch hashes, and no fingerprint is recorded")
	}
	t.Parallel()
	path := copyPlugin(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := fileSHA(t, path)
	state := t.TempDir()
	p := Plugin{Name: "fp", Path: path, SHA256: sum}

	run := func(t *testing.T) (*Host, error) {
		t.Helper()
		h := New(WithLogger(testLogger(nil, hclog.Info)), WithStateDir(state))
		h.verifier.settle = 0 // the copy was just written
		h.Register(p)
		_, err := h.Invoke(context.Background(), "fp", "echo", json.RawMessage(`{"text":"x"}`))
		_ = h.Close()
		return h, err
	}
	h, err := run(t)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.verifier.hashes.Load(); n != 1 {
		t.Fatalf("first launch hashed %d times, want 1", n)
	}
	recs, _ := filepath.Glob(filepath.Join(state, "fingerprints", "*.json"))
	if len(recs) != 1 {
		t.Fatalf("fingerprint records: %v", recs)
	}
	if info, err := os.Stat(filepath.Join(state, "fingerprints")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("fingerprint dir mode: %v %v", info.Mode(), err)
	}

	t.Run("unchanged file skips the hash in a new host", func(t *testing.T) {
		h, err := run(t)
		if err != nil {
			t.Fatal(err)
		}
		if n := h.verifier.hashes.Load(); n != 0 {
			t.Fatalf("hashed %d times, want 0", n)
		}
	})
	t.Run("rewrite with same bytes is re-hashed and accepted", func(t *testing.T) {
		if err := os.WriteFile(path, orig, 0o755); err != nil {
			t.Fatal(err)
		}
		h, err := run(t)
		if err != nil {
			t.Fatal(err)
		}
		if n := h.verifier.hashes.Load(); n != 1 {
			t.Fatalf("hashed %d times, want 1", n)
		}
	})
	t.Run("same-size rewrite with restored mtime is caught", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		evil := slices.Clone(orig)
		evil[len(evil)/2] ^= 0xff
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(evil[len(evil)/2:len(evil)/2+1], int64(len(evil)/2)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t); !errors.Is(err, ErrTampered) {
			t.Fatalf("err = %v, want ErrTampered", err)
		}
	})
}

func TestStdoutNoiseDoesNotBreakHandshake(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	h := New(WithLogger(testLogger(logs, hclog.Debug)))
	t.Cleanup(func() { _ = h.Close() })
	h.Register(tp("TESTPLUGIN_NOISE=1"))
	res, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatalf("noisy plugin: %v", err)
	}
	if string(res.Value) != `{"text":"hi"}` {
		t.Fatalf("got %s", res.Value)
	}
	if _, err := h.Invoke(context.Background(), "tp", "print", json.RawMessage(`{"text":"after serve"}`)); err != nil {
		t.Fatalf("print: %v", err)
	}
	if _, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"again"}`)); err != nil {
		t.Fatalf("call after prints: %v", err)
	}
	_ = h.Close()
	for _, want := range []string{"early init noise", "partial line without newline", "main package init noise", "main noise before Serve", "after serve (fd 1)"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("host log lacks %q:\n%s", want, logs)
		}
	}
}

func TestEnvIsExactlyWhatWasGiven(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	h.Register(tp("HELLO_NAME=ada", "PATH=/nowhere"))
	res, err := h.Invoke(context.Background(), "tp", "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(res.Value, &env); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	protocol := []string{sdk.Handshake.MagicCookieKey, "PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT",
		"PLUGIN_PROTOCOL_VERSIONS", "PLUGIN_UNIX_SOCKET_DIR", sdk.EnvLogLevel}
	for k := range got {
		if k != "HELLO_NAME" && k != "PATH" && !slices.Contains(protocol, k) {
			t.Errorf("plugin got unexpected variable %s", k)
		}
	}
	if got["HELLO_NAME"] != "ada" || got["PATH"] != "/nowhere" {
		t.Errorf("given variables not passed: %v", got)
	}
	if got[sdk.EnvLogLevel] != "debug" {
		t.Errorf("%s = %q, want debug", sdk.EnvLogLevel, got[sdk.EnvLogLevel])
	}
	dir := got["PLUGIN_UNIX_SOCKET_DIR"]
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("socket dir %q: %v", dir, err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestCloseKillsPlugins(t *testing.T) {
	t.Parallel()
	h := New(WithLogger(testLogger(nil, hclog.Info)))
	h.Register(tp())
	p2 := tp()
	p2.Name = "tp2"
	h.Register(p2)
	pids := []int{pidOf(t, h, "tp"), pidOf(t, h, "tp2")}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("plugin %d alive after Close", pid)
		}
	}
	if _, err := h.Invoke(context.Background(), "tp", "pid", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestStartFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Plugin
		want error
	}{
		{name: "not a plugin", p: Plugin{Name: "sh", Path: "/bin/sh", Args: []string{"-c", "echo not a plugin; echo oops >&2"}}, want: ErrStart},
		{name: "missing binary", p: Plugin{Name: "gone", Path: "/nonexistent/plugin", SHA256: strings.Repeat("0", 64)}, want: ErrStart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, WithStartTimeout(5*time.Second))
			h.Register(tc.p)
			_, err := h.Invoke(context.Background(), tc.p.Name, "x", nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tc.p.Name)) {
				t.Errorf("message %q does not name the skill", err)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	tools, err := Describe(context.Background(), tp(), WithLogger(testLogger(nil, hclog.Info)))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(ti sdk.ToolInfo) bool { return ti.Name == "echo" })
	if i < 0 {
		t.Fatalf("no echo tool in %v", tools)
	}
	var schema map[string]any
	if err := json.Unmarshal(tools[i].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema["type"] != "object" || schema["additionalProperties"] != false {
		t.Errorf("schema %s", tools[i].InputSchema)
	}
}

const helperEnv = "HOST_TEST_HELPER_PLUGIN"

// TestHelperHost is not a test: TestPluginsDieWithKilledHost runs this
// binary with helperEnv set, and this function becomes a host that starts
// a plugin, prints its pid and waits to be killed.
func TestHelperHost(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	h := New()
	h.Register(Plugin{Name: "tp", Path: path})
	res, err := h.Invoke(context.Background(), "tp", "pid", nil)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	d, err := h.Invoke(context.Background(), "tp", "daemon", nil)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("pid " + string(res.Value) + " " + string(d.Value) + "\n")
	select {}
}

func TestPluginsDieWithKilledHost(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), helperEnv+"="+testPlugin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper host: %v", err)
	}
	var pid, daemon int
	if _, err := fmt.Sscanf(line, "pid %d %d", &pid, &daemon); err != nil {
		t.Fatalf("helper host said %q", line)
	}
	if !alive(daemon) {
		t.Fatalf("the plugin's daemon %d not running before the kill", daemon)
	}
	if !alive(pid) {
		t.Fatalf("plugin %d not running before the kill", pid)
	}
	// Nobody is left to remove the plugin's socket directory; the test does.
	if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil {
		for _, kv := range strings.Split(string(env), "\x00") {
			if dir, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok {
				t.Cleanup(func() { _ = os.RemoveAll(dir) })
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// SPEC §12: the plugin must be gone within 2 s of the host's death.
	for deadline := time.Now().Add(2 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin %d still alive 2s after its host was SIGKILLed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The plugin was a subreaper and ended its daemon before it exited.
	if !gone(t, daemon, 2*time.Second) {
		if platform.Portable {
			// No subreaper in the fallback (docs/reliability.md).
			_ = syscall.Kill(daemon, syscall.SIGKILL)
			t.Skipf("EXPECTED in portable mode: the plugin's setsid daemon %d outlived the SIGKILLed host", daemon)
		}
		t.Errorf("the plugin's setsid daemon %d outlived the SIGKILLed host", daemon)
	}
}

func TestFilterEnv(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t", "SECRET=x", "HELLO_A=1", "HELLO=2", "AWS_KEY=k", "bad"}
	tests := []struct {
		name  string
		allow []string
		pass  []string
		want  []string
	}{
		{name: "base only", want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t"}},
		{name: "wildcard", allow: []string{"HELLO_*"}, want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t", "HELLO_A=1"}},
		{name: "exact", allow: []string{"HELLO", "AWS_KEY"}, want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t", "HELLO=2", "AWS_KEY=k"}},
		{name: "bad pattern ignored", allow: []string{"["}, want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t"}},
		{name: "a pattern hands over no secret", allow: []string{"AWS_*", "*"}, want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t", "HELLO_A=1", "HELLO=2"}},
		{name: "the configuration names a secret the skill asks for", allow: []string{"AWS_*"}, pass: []string{"AWS_KEY"}, want: []string{"PATH=/bin", "HOME=/h", "LANG=C", "TMPDIR=/t", "AWS_KEY=k"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FilterEnv(environ, tc.allow, tc.pass); !slices.Equal(got, tc.want) {
				t.Errorf("FilterEnv = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestScriptPluginRunsFromSealedCopy: a verified "#!" wrapper runs from
// the sealed copy (its interpreter reads /proc/self/fd/3), not by path.
func TestScriptPluginRunsFromSealedCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "wrapper.sh")
	script := "#!/bin/sh\n[ \"$0\" = /proc/self/fd/3 ] || exit 9\nexec " + testPlugin + " \"$@\"\n"
	if !sealedCopies {
		// The fallback runs the private copy by its path.
		script = "#!/bin/sh\ncase \"$0\" in */agent-plugin-*) ;; *) exit 9 ;; esac\nexec " + testPlugin + " \"$@\"\n"
	}
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	h.Register(Plugin{Name: "wrapped", Path: wrapper, SHA256: fileSHA(t, wrapper)})
	res, err := h.Invoke(context.Background(), "wrapped", "echo", json.RawMessage(`{"text":"via sh"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"text":"via sh"}` {
		t.Errorf("got %s", res.Value)
	}
}

// TestServeExitsWhenParentGoes checks sdk.Serve's own guard, without the
// host's Pdeathsig: the plugin's parent is a shell that exits after a
// second, and the orphaned plugin must notice and exit.
func TestServeExitsWhenParentGoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Only the plugin carries the cookie: a shell child of this test
	// process with the cookie would look like a crashed plugin's leftover
	// to a concurrent test's host (a subreaper that sweeps those).
	cmd := exec.Command("/bin/sh", "-c", `exec env "$CK=$CV" PLUGIN_PROTOCOL_VERSIONS=1 PLUGIN_UNIX_SOCKET_DIR="$SOCKDIR" "$PLUGIN" & echo pid $!; sleep 1`)
	cmd.Env = []string{
		"CK=" + sdk.Handshake.MagicCookieKey, "CV=" + sdk.Handshake.MagicCookieValue,
		"SOCKDIR=" + dir, "PLUGIN=" + testPlugin,
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(s)
		}
	}
	go func() {
		for sc.Scan() { // keep the pipe drained
		}
	}()
	if pid == 0 {
		t.Fatal("no plugin pid from the shell")
	}
	_ = cmd.Wait() // the shell exits; the plugin is orphaned
	for i := 0; alive(pid); i++ {
		if i > 1000 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("orphaned plugin %d did not exit", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPluginLogsUseHostLevel(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	h := New(WithLogger(testLogger(logs, hclog.Info)))
	t.Cleanup(func() { _ = h.Close() })
	h.Register(tp())
	for _, l := range []struct{ level, msg string }{{"debug", "debug-line-dropped"}, {"info", "info-line-kept"}, {"error", "error-line-kept"}} {
		args, _ := json.Marshal(map[string]string{"level": l.level, "message": l.msg})
		if _, err := h.Invoke(context.Background(), "tp", "log", args); err != nil {
			t.Fatal(err)
		}
	}
	_ = h.Close() // flushes the log pipes
	out := logs.String()
	for _, want := range []string{"[INFO]  host.tp: info-line-kept", "[ERROR] host.tp: error-line-kept", "tool=log"} {
		if !strings.Contains(out, want) {
			t.Errorf("host log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "debug-line-dropped") {
		t.Errorf("debug line logged at info level:\n%s", out)
	}
}

// withAutoMTLS turns go-plugin's AutoMTLS on or off whatever the system
// (it is on only on Windows, where plugins listen on TCP).
func withAutoMTLS(on bool) Option { return func(c *config) { c.autoMTLS = on } }

// TestAutoMTLS: with AutoMTLS forced on, as on Windows, a real plugin
// built with the SDK receives the host's certificate, answers with its
// own in the handshake (without it the host's TLS check fails and no call
// gets through) and serves calls over the authenticated connection.
func TestAutoMTLS(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("automtls=%v", on), func(t *testing.T) {
			t.Parallel()
			h := newHost(t, withAutoMTLS(on))
			h.Register(tp())
			res, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"over tls"}`))
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != `{"text":"over tls"}` {
				t.Errorf("echo = %s", res.Value)
			}
			res, err = h.Invoke(context.Background(), "tp", "env", nil)
			if err != nil {
				t.Fatal(err)
			}
			var env []string
			if err := json.Unmarshal(res.Value, &env); err != nil {
				t.Fatal(err)
			}
			var cert string
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "PLUGIN_CLIENT_CERT="); ok {
					cert = v
				}
			}
			if on && !strings.HasPrefix(cert, "-----BEGIN CERTIFICATE-----") {
				t.Errorf("plugin got no client certificate (PLUGIN_CLIENT_CERT=%.40q)", cert)
			}
			if !on && cert != "" {
				t.Errorf("plugin got a client certificate with AutoMTLS off")
			}
		})
	}
}

// withScripts allows or refuses "#!" plugins whatever the system (they
// are refused only on Windows).
func withScripts(on bool) Option { return func(c *config) { c.scripts = on } }

// TestScriptPluginRefusedOnWindows: where scripts cannot run (Windows,
// forced here), a "#!" plugin is refused before anything starts, with an
// error naming the skill and what to do, and nothing runs.
func TestScriptPluginRefusedOnWindows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	wrapper := filepath.Join(dir, "wrapper.sh")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\ntouch "+ran+"\nexec "+testPlugin+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, withScripts(false))
	h.Register(Plugin{Name: "wrapped", Path: wrapper, SHA256: fileSHA(t, wrapper)})
	_, err := h.Invoke(context.Background(), "wrapped", "echo", json.RawMessage(`{"text":"x"}`))
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), `skill "wrapped"`) || !strings.Contains(err.Error(), "Windows cannot run") {
		t.Fatalf("err = %v; want ErrStart naming the skill and saying Windows cannot run it", err)
	}
	if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the script ran (%v)", err)
	}
	// A compiled plugin still runs there.
	h.Register(tp())
	if _, err := h.Invoke(context.Background(), "tp", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
}
