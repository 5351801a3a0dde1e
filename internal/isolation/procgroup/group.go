package procgroup

import (
	"os/exec"
	"sync"
)

// Group is a started command and everything it starts, held together so
// that all of it can be ended at once, also when this process dies. The
// calls, in order:
//
//	g, err := New(cmd)  // before cmd starts: readies cmd.SysProcAttr
//	err = g.Start()     // starts cmd and joins it to its group; or a
//	                    // caller's own start (Spawn, or a thread that
//	                    // outlives the child), then g.Started()
//	...                 // g.Stop, g.Kill at any time, from any goroutine
//	err = g.Wait()      // once: reaps cmd, ending what it left behind
//	g.Release()
//
// When cmd fails to start, Release is the only call after New.
type Group struct {
	cmd *exec.Cmd
	pid int
	sys sysGroup // the platform's part (group_*.go)

	// mu orders signals to the group before the leader is reaped, after
	// which its pid (and so a process group id) could be reused.
	mu     sync.Mutex
	reaped bool
}

// New readies cmd, which has not started, to start in a group of its own.
func New(cmd *exec.Cmd) (*Group, error) {
	g := &Group{cmd: cmd}
	if err := g.sys.prepare(cmd); err != nil {
		return nil, err
	}
	return g, nil
}

// Started joins cmd, just started, to the group. On failure it has killed
// the child (cmd.Wait still reaps it).
func (g *Group) Started() error {
	g.pid = g.cmd.Process.Pid
	if err := g.sys.started(g.cmd); err != nil {
		_ = g.cmd.Process.Kill()
		return err
	}
	return nil
}

// Pid is the leader's process id.
func (g *Group) Pid() int { return g.pid }

// Kill ends the leader, if it still runs, and every process in its group.
// It does nothing once the leader is reaped.
func (g *Group) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		g.sys.kill(g.pid)
	}
}

// Stop asks the leader to stop (SIGTERM, so that a plugin can end what it
// started first); where there is no such request (Windows) it kills the
// group. It does nothing once the leader is reaped.
func (g *Group) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		g.sys.stop(g.pid)
	}
}

// Wait waits for the leader to exit, kills whatever is left in its group
// and reaps the leader, returning cmd.Wait's error. Where the platform can
// wait without reaping (Linux), the group is killed before the leader is
// reaped, so that its id cannot have been reused; elsewhere it is killed
// right after.
func (g *Group) Wait() error {
	if g.sys.waitExit(g.pid) {
		g.mu.Lock()
		g.sys.kill(g.pid)
		g.reaped = true
		g.mu.Unlock()
		return g.cmd.Wait()
	}
	err := g.cmd.Wait()
	g.mu.Lock()
	g.sys.kill(g.pid)
	g.reaped = true
	g.mu.Unlock()
	return err
}

// Release frees what holds the group together (a job handle). After it,
// nothing holds the group: call it once the leader is reaped, or when the
// command failed to start.
func (g *Group) Release() { g.sys.release() }
