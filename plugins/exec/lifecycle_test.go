//go:build unix

package exec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

// The test binary doubles as the processes these tests need, chosen by
// EXEC_TEST_HELPER: "main" is `agent __plugin exec` (exec.Main), "plugin"
// runs one script_run call and blocks, "host" starts a "plugin" and blocks.
const helperEnv = "EXEC_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "main":
		os.Exit(Main())
	case "plugin":
		os.Exit(helperPlugin())
	case "host":
		os.Exit(helperHost())
	}
	os.Exit(m.Run())
}

// helperPlugin runs group.py (from the config's first skill) through the
// tools with the SIGTERM/parent-death handling of Main.
func helperPlugin() int {
	cfg, err := configFromEnv()
	if err != nil {
		return 10
	}
	if !running.StopWithParent() {
		return 11
	}
	args, _ := json.Marshal(map[string]any{"skill_name": cfg.Skills[0].Name, "script_name": "group", "args": []string{os.Getenv("EXEC_TEST_PIDS"), "sleep"}})
	_, _ = New(cfg).Invoke(context.Background(), "script_run", args)
	return 12
}

func helperHost() int {
	cmd := osexec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=plugin")
	if err := cmd.Start(); err != nil {
		return 20
	}
	if err := os.WriteFile(os.Getenv("EXEC_TEST_PLUGIN_PID"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return 21
	}
	_ = cmd.Wait()
	return 22
}

// pluginEnv is the environment of a helper: PATH finds only a python3 link
// (and the system tools a script uses), the config names one skill with
// group.py and echo.py.
func pluginEnv(t *testing.T, cfg Config) ([]string, string) {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	skill := filepath.Join(root, "skill")
	writeFiles(t, skill, map[string]string{"scripts/group.py": groupPy, "scripts/echo.py": echoPy})
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(requirePython(t), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	// The scripts record pids under root: declared, as a skill would.
	cfg.Skills = []Skill{{Name: "demo", Dir: skill, FSWrite: []string{root}}}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + root, "LANG=C.UTF-8", ConfigEnv + "=" + string(raw)}, root
}

// appears waits (at most 20 s) for p to exist and reports whether it does.
// It is safe in any goroutine; callers fail the test where they may.
func appears(p string) bool {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	if !appears(p) {
		t.Fatalf("%s did not appear", p)
	}
}

func TestMainRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct{ name, value string }{{"unset", ""}, {"not JSON", "{"}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := osexec.Command(os.Args[0])
			cmd.Env = []string{helperEnv + "=main"}
			if tc.value != "" {
				cmd.Env = append(cmd.Env, ConfigEnv+"="+tc.value)
			}
			out, err := cmd.CombinedOutput()
			var exit *osexec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), ConfigEnv) {
				t.Errorf("Main() = %v, output %q; want exit 1 naming %s", err, out, ConfigEnv)
			}
		})
	}
}

// TestPluginProcess serves the skill from a real plugin process (Main over
// go-plugin) and checks a call, a deadline and SIGTERM of the plugin.
func TestPluginProcess(t *testing.T) {
	t.Parallel()
	env, root := pluginEnv(t, Config{})
	c := sdktest.Start(t, os.Args[0], append(env, helperEnv+"=main")...)
	ctx := context.Background()

	res, err := c.Call(ctx, "script_run", map[string]any{"skill_name": "demo", "script_name": "echo", "args": []string{"hi"}})
	if err != nil {
		t.Fatalf("script_run: %v", err)
	}
	if !strings.Contains(string(res.Value), `"args":["hi"]`) || !strings.Contains(res.Message, "ran with python3") {
		t.Errorf("script_run = %s, %q", res.Value, res.Message)
	}
	_, err = c.Call(ctx, "script_run", map[string]any{"skill_name": "demo", "script_name": "../echo"})
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != CodeInvalidName {
		t.Errorf("script_run(../echo) error = %v, want invalid_name", err)
	}

	t.Run("a deadline from the host kills the script's group", func(t *testing.T) {
		pids := filepath.Join(root, "deadline-pids")
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { appears(pids); cancel() }()
		_, err := c.Call(ctx, "script_run", map[string]any{"skill_name": "demo", "script_name": "group", "args": []string{pids, "sleep"}})
		if err == nil {
			t.Fatal("script_run returned without error after cancel")
		}
		checkGroupGone(t, pids)
	})

	t.Run("SIGTERM to the plugin kills running scripts", func(t *testing.T) {
		pids := filepath.Join(root, "sigterm-pids")
		done := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, "script_run", map[string]any{"skill_name": "demo", "script_name": "group", "args": []string{pids, "sleep"}})
			done <- err
		}()
		waitFile(t, pids)
		if err := syscall.Kill(c.PID(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil {
			t.Error("the call succeeded although the plugin was stopped")
		}
		checkGroupGone(t, pids)
		gone(t, c.PID(), "exec.test")
	})
}

// TestHostDeathKillsScripts SIGKILLs a host whose plugin is running a
// script: the plugin hears of it (PR_SET_PDEATHSIG) and kills the script's
// whole group before exiting.
func TestHostDeathKillsScripts(t *testing.T) {
	t.Parallel()
	env, root := pluginEnv(t, Config{})
	pids, pluginPid := filepath.Join(root, "pids"), filepath.Join(root, "plugin.pid")
	host := osexec.Command(os.Args[0])
	host.Env = append(env, helperEnv+"=host", "EXEC_TEST_PIDS="+pids, "EXEC_TEST_PLUGIN_PID="+pluginPid)
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, pids)
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	checkGroupGone(t, pids)
	b, err := os.ReadFile(pluginPid)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	gone(t, pid, "exec.test")
}
