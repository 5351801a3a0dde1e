//go:build linux && !portable

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStartOutlivesTheCallersThread: a command keeps running after the
// thread that called Start ends. The kernel sends a leader its
// parent-death signal when the thread that forked it ends; a sandboxed
// start locks a thread and lets it end, so a fork from an ordinary
// goroutine's thread could die with another command's release.
func TestStartOutlivesTheCallersThread(t *testing.T) {
	cases := []struct {
		name  string
		start func(cmd *exec.Cmd) (stop func(), err error)
	}{
		{"Group.Start", func(cmd *exec.Cmd) (func(), error) {
			g, err := New(cmd)
			if err != nil {
				return nil, err
			}
			if err := g.Start(); err != nil {
				g.Release()
				return nil, err
			}
			return func() { g.Kill(); _ = g.Wait(); g.Release() }, nil
		}},
		{"Set.Start", func(cmd *exec.Cmd) (func(), error) {
			s := NewSet("the test")
			if err := s.Start(cmd); err != nil {
				return nil, err
			}
			return func() {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				s.Wait(ctx, cmd, time.Minute)
			}, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "60")
			var tid int
			type result struct {
				stop func()
				err  error
			}
			started := make(chan result)
			for stop := (func())(nil); stop == nil; {
				go func() {
					// Never unlocked: the thread ends with this goroutine,
					// as a sandboxed start's does; the main thread never
					// ends (the runtime parks it), so try another.
					runtime.LockOSThread()
					if tid = unix.Gettid(); tid == os.Getpid() {
						started <- result{}
						return
					}
					stop, err := tc.start(cmd)
					started <- result{stop, err}
				}()
				r := <-started
				if r.err != nil {
					t.Fatal(r.err)
				}
				if stop = r.stop; stop != nil {
					t.Cleanup(stop)
				}
			}
			task := "/proc/self/task/" + strconv.Itoa(tid)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(task); os.IsNotExist(err) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the starting thread %d did not end", tid)
				}
			}
			// The thread is gone, so a parent-death signal tied to it has
			// been sent; give it time to land.
			for range 50 {
				if !alive(cmd.Process.Pid) {
					t.Fatalf("the command (pid %d) died when the thread that called Start ended", cmd.Process.Pid)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
