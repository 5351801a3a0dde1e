package procgroup

import (
	"os/exec"
	"runtime"
	"sync"
)

// Start starts cmd, readied by New, and joins it to the group (Started).
//
// The fork happens on one thread that lives as long as this process. On
// Linux the leader's parent-death signal (SIGKILL) fires when the *thread*
// that forked it ends, not the process; a sandboxed start elsewhere in the
// process (sandbox.Start) locks a thread and lets it end, and the Go
// runtime may hand that thread to any goroutine first. A command started
// from an ordinary goroutine could therefore be killed while it runs by
// another command's release.
func (g *Group) Start() error {
	if err := Spawn(g.cmd); err != nil {
		return err
	}
	return g.Started()
}

// Spawn is cmd.Start from the thread that never ends (see Group.Start),
// for callers that start a command readied by New themselves.
func Spawn(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.ch = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread never ends
			for r := range spawner.ch {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.ch <- spawnReq{cmd: cmd, done: done}
	return <-done
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var spawner struct {
	once sync.Once
	ch   chan spawnReq
}
