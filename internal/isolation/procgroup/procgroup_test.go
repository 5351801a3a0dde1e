//go:build unix

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestWaitKillsTheGroup: whatever a command leaves in its group is killed
// when it exits, times out or its context ends; the set forgets it.
func TestWaitKillsTheGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		script   string
		timeout  time.Duration
		cancel   bool
		timedOut bool
	}{
		{name: "exited", script: "sleep 300 & echo $! > \"$1\"", timeout: time.Minute},
		{name: "timed out", script: "sleep 300 & echo $! > \"$1\"; wait", timeout: 200 * time.Millisecond, timedOut: true},
		{name: "cancelled", script: "sleep 300 & echo $! > \"$1\"; wait", timeout: time.Minute, cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			s := NewSet("the test")
			cmd := exec.Command("/bin/sh", "-c", tc.script, "sh", pidFile)
			if err := s.Start(cmd); err != nil {
				t.Fatal(err)
			}
			if !s.Has(cmd.Process.Pid) {
				t.Error("a started command is not in the set")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for {
						if _, err := os.Stat(pidFile); err == nil {
							cancel()
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			out := s.Wait(ctx, cmd, tc.timeout)
			if out.TimedOut != tc.timedOut {
				t.Errorf("TimedOut = %v, want %v", out.TimedOut, tc.timedOut)
			}
			if tc.cancel && out.Ctx == nil {
				t.Error("Ctx is nil after cancel")
			}
			if s.Has(cmd.Process.Pid) {
				t.Error("a reaped command is still in the set")
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			for i := 0; alive(child); i++ {
				if i == 500 {
					_ = syscall.Kill(child, syscall.SIGKILL)
					t.Fatalf("the command's child %d outlived it", child)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestStartRefusesAfterKillAll(t *testing.T) {
	s := NewSet("the test plugin")
	s.KillAll()
	err := s.Start(exec.Command("true"))
	if err == nil || !strings.Contains(err.Error(), "the test plugin is shutting down") {
		t.Fatalf("Start after KillAll = %v, want a shutting-down error", err)
	}
}
