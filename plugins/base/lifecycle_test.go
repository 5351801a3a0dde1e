//go:build linux

package base

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/agentskills/agent/internal/testutil/nspid"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/sdk"
)

// The test binary doubles as the processes these tests need, chosen by
// BASE_TEST_HELPER: "plugin" runs one long shell_command with Main's
// signal handling and blocks; "host" starts a "plugin" and blocks.
const helperEnv = "BASE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "plugin":
		os.Exit(helperPlugin())
	case "host":
		os.Exit(helperHost())
	}
	code := m.Run()
	if treeDir != "" {
		os.RemoveAll(treeDir)
	}
	os.Exit(code)
}

func helperPlugin() int {
	cfg, err := configFromEnv()
	if err != nil {
		return 10
	}
	if !running.StopWithParent() {
		return 11
	}
	args, _ := json.Marshal(map[string]any{"command": "sleep 300 & echo $! > " + os.Getenv("BASE_TEST_PID") + "; wait", "timeout_ms": 600000})
	_, _ = New(cfg).Invoke(context.Background(), "shell_command", args)
	return 12
}

func helperHost() int {
	cmd := osexec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=plugin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // what the host asks for
	if err := cmd.Start(); err != nil {
		return 20
	}
	_ = cmd.Wait()
	return 21
}

// TestCommandsDieWithThePlugin: a command's grandchild is killed when the
// plugin is told to stop (SIGTERM), and when the host dies by SIGKILL.
func TestCommandsDieWithThePlugin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, helper string }{{"sigterm", "plugin"}, {"host killed", "host"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			cfg, _ := json.Marshal(Config{Root: dir})
			cmd := osexec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.helper, "BASE_TEST_PID="+pidFile, ConfigEnv+"="+string(cfg),
				sdk.Handshake.MagicCookieKey+"="+sdk.Handshake.MagicCookieValue)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			// The helper's parent-death signal (StopWithParent) fires when
			// the thread that forked it ends, and other tests' sandboxed
			// commands end the threads they locked: fork it from a thread
			// that lives until the helper has exited.
			exited, started := make(chan error, 1), make(chan error, 1)
			go func() {
				runtime.LockOSThread()
				if err := cmd.Start(); err != nil {
					started <- err
					return
				}
				started <- nil
				exited <- cmd.Wait()
			}()
			if err := <-started; err != nil {
				t.Fatal(err)
			}
			// The pid the command wrote is its PID namespace's: find
			// its own here while it runs.
			pid := nspid.Host(cmd.Process.Pid, waitPID(t, pidFile, exited, &out))
			if pid == 0 {
				t.Fatal("the command's child is not running under the plugin")
			}
			if tc.helper == "plugin" {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			} else {
				_ = cmd.Process.Kill()
			}
			<-exited
			for range 250 {
				if syscall.Kill(pid, 0) != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the command's child %d outlived the plugin", pid)
		})
	}
}

// waitPID waits for the command to write its pid, and fails with the
// helper's exit and output if the helper ends first.
func waitPID(t *testing.T, file string, exited <-chan error, out *bytes.Buffer) int {
	t.Helper()
	// Patient: under make test's parallel load, a sandboxed command has
	// taken over 10 s to start. This waits for it; it times nothing.
	for range 3000 {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the helper ended before the command started: %v\n%s", err, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the command never started")
	return 0
}
