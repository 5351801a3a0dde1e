//go:build unix

package base

import (
	"context"
	"errors"
	"github.com/agentskills/agent/internal/testutil/nspid"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

func TestExec(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"sub/f.txt": "in sub\n", "run.sh": "#!/bin/sh\necho script ran\n", "noexec.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(w.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(w.dir)
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		code   string
		exit   int
		output string // substring
		inMsg  string
	}{
		{name: "args without a shell", tool: "exec", args: map[string]any{"command": "echo", "args": []string{"a b", "$HOME", "*"}}, output: "a b $HOME *\n"},
		{name: "cwd defaults to the workspace", tool: "exec", args: map[string]any{"command": "pwd"}, output: realDir + "\n"},
		{name: "cwd inside", tool: "exec", args: map[string]any{"command": "cat", "args": []string{"f.txt"}, "cwd": "sub"}, output: "in sub"},
		{name: "env added to the host's", tool: "exec", args: map[string]any{"command": "sh", "args": []string{"-c", "echo $BASE_TEST_VAR:$PATH"}, "env": map[string]string{"BASE_TEST_VAR": "set"}}, output: "set:" + os.Getenv("PATH")},
		{name: "relative path command", tool: "exec", args: map[string]any{"command": "./run.sh"}, output: "script ran"},
		{name: "non-zero exit is a result", tool: "exec", args: map[string]any{"command": "sh", "args": []string{"-c", "echo out; echo err >&2; exit 3"}}, exit: 3, output: "out\nerr\n", inMsg: "exit code 3"},
		{name: "shell", tool: "shell_command", args: map[string]any{"command": "echo one | tr a-z A-Z"}, output: "ONE"},
		{name: "shell workdir", tool: "shell_command", args: map[string]any{"command": "ls", "workdir": "sub"}, output: "f.txt"},
		{name: "signal", tool: "shell_command", args: map[string]any{"command": "kill -9 $$"}, exit: -1, inMsg: "signal: killed"},
		{name: "unknown command", tool: "exec", args: map[string]any{"command": "no-such-command-xyz"}, code: CodeExecutionFailed, inMsg: "not found on PATH"},
		{name: "not executable", tool: "exec", args: map[string]any{"command": "./noexec.sh"}, code: CodePermissionDenied},
		{name: "cwd outside", tool: "exec", args: map[string]any{"command": "pwd", "cwd": "/"}, code: CodePathOutside},
		{name: "cwd up", tool: "shell_command", args: map[string]any{"command": "pwd", "workdir": "../.."}, code: CodePathOutside},
		{name: "cwd a file", tool: "exec", args: map[string]any{"command": "pwd", "cwd": "sub/f.txt"}, code: CodeNotFound},
		{name: "cwd missing", tool: "exec", args: map[string]any{"command": "pwd", "cwd": "nope"}, code: CodeNotFound},
		{name: "NUL in an argument", tool: "exec", args: map[string]any{"command": "echo", "args": []string{"a\x00b"}}, code: CodeInvalidArgs},
		{name: "bad env name", tool: "exec", args: map[string]any{"command": "env", "env": map[string]string{"A=B": "x"}}, code: CodeInvalidArgs},
		{name: "empty command", tool: "exec", args: map[string]any{"command": ""}, code: CodeInvalidArgs},
		{name: "timeout", tool: "shell_command", args: map[string]any{"command": "echo started; sleep 30", "timeout_ms": 300}, code: CodeTimeout, inMsg: "started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r ExecResult
			msg, code := w.call(tt.tool, tt.args, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if !strings.Contains(msg, tt.inMsg) {
				t.Errorf("message %q does not say %q", msg, tt.inMsg)
			}
			if code != "" {
				return
			}
			if r.ExitCode != tt.exit || !strings.Contains(r.Output, tt.output) {
				t.Errorf("exit %d output %q, want %d and %q", r.ExitCode, r.Output, tt.exit, tt.output)
			}
		})
	}
}

func TestExecOutputMiddleOut(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	c := sdktest.Run(t, New(Config{Root: parent, MaxOutput: 1000}))
	res, err := c.Call(context.Background(), "shell_command", map[string]any{"command": "echo FIRST; seq 1 100000; echo LAST"})
	if err != nil {
		t.Fatal(err)
	}
	var r ExecResult
	mustJSON(t, res.Value, &r)
	if !r.Truncated || !strings.HasPrefix(r.Output, "FIRST\n1\n") || !strings.HasSuffix(r.Output, "100000\nLAST\n") {
		t.Fatalf("head or tail lost: truncated=%v %q", r.Truncated, r.Output)
	}
	if !strings.Contains(r.Output, "lines (") || len(r.Output) > 1100 {
		t.Errorf("no marker or too long (%d): %q", len(r.Output), r.Output)
	}
	if !strings.Contains(res.Message, "middle was left out") {
		t.Errorf("message %q does not warn", res.Message)
	}
}

// A timeout kills the whole process group: a grandchild does not outlive
// the call.
func TestExecTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, nil)
	pidFile := filepath.Join(w.dir, "pid")
	codes := make(chan string, 1)
	go func() {
		_, code := w.call("shell_command", map[string]any{"command": "sleep 300 & echo $! > pid; wait", "timeout_ms": 2000}, nil)
		codes <- code
	}()
	// The pid written is the sandbox's PID namespace's: find the sleep
	// here while it runs.
	pid := 0
	for i := 0; i < 150 && pid == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		if data, err := os.ReadFile(pidFile); err == nil && len(data) > 0 && data[len(data)-1] == '\n' {
			inner, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			pid = nspid.Host(os.Getpid(), inner, "sleep", "300")
		}
	}
	if pid == 0 {
		t.Fatal("the grandchild sleep 300 was not found running")
	}
	if code := <-codes; code != CodeTimeout {
		t.Fatalf("code %q, want timeout", code)
	}
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("grandchild %d still alive after the timeout", pid)
}

// The caller's deadline reaches the command: it is killed, not waited
// for (the command would sleep for five minutes).
func TestExecCallerDeadline(t *testing.T) {
	t.Parallel()
	s := &service{cfg: Config{Root: t.TempDir()}.withDefaults()}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := s.shell(ctx, ShellInput{Command: "sleep 300"})
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != CodeTimeout {
		t.Fatalf("err %v, want a timeout", err)
	}
}
