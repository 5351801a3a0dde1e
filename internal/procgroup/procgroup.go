// Package procgroup runs the commands of the bundled plugins (exec's
// scripts, base's exec and shell_command) each in a process group of its
// own, and ends the whole group, with whatever the command left behind,
// when the command ends, times out or its call is cancelled. Both plugins
// are sdk skills; the sdk itself makes a plugin a subreaper and ends every
// descendant when the plugin stops (sdk/internal/proctree), so this
// package only adds what a plugin that starts commands needs per command.
// It lives in the root module's internal/ so that the sdk, a module of
// its own that plugin authors import, does not grow an API for it.
package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/cgroup"
	"github.com/agentskills/agent/internal/sandbox"
	"github.com/agentskills/agent/sdk"
)

// Set tracks the commands in flight so that a plugin told to stop can
// kill their groups first, and so that a sweep of adopted orphans
// (sdk.KillAdopted) never reaps a child os/exec still waits for.
type Set struct {
	owner string // "the exec plugin", for the error after Close
	mu    sync.Mutex
	// m maps a command's pid to its entry; the pid leaves m once reaped.
	m      map[int]*entry
	closed bool
}

// entry is one command in flight.
type entry struct {
	live    bool          // its group may still be signalled (false once it is about to be reaped)
	group   *cgroup.Group // its cgroup, nil where none is writable
	release func()        // ends the sandbox's parked thread, nil when not sandboxed
}

// NewSet returns an empty set; owner names the plugin in the error that
// Start returns once the set is closed.
func NewSet(owner string) *Set { return &Set{owner: owner, m: map[int]*entry{}} }

// Start starts cmd in a process group of its own, which the kernel kills
// if this plugin dies (even by SIGKILL), and tracks it. It refuses once
// KillAll has run.
func (s *Set) Start(cmd *exec.Cmd) error { return s.StartSandboxed(cmd, nil) }

// StartSandboxed is Start, confined to p when p is not nil. Where a
// cgroup v2 group can be made below this plugin's own (which the host
// kills with everything below it), the command runs in one of its own:
// Wait then ends every descendant, setsid or not, with cgroup.kill.
func (s *Set) StartSandboxed(cmd *exec.Cmd, p *sandbox.Policy) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	e := &entry{live: true}
	if parent, err := cgroup.Local(); err == nil {
		if g, err := parent.New("command"); err == nil {
			e.group = g
			g.Attach(cmd.SysProcAttr)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) error {
		if e.group != nil {
			_ = e.group.Close(time.Second)
		}
		return err
	}
	if s.closed {
		return fail(errors.New(s.owner + " is shutting down"))
	}
	if p == nil {
		if err := cmd.Start(); err != nil {
			return fail(err)
		}
	} else {
		release, err := sandbox.Start(cmd, *p, (*exec.Cmd).Start)
		if err != nil {
			return fail(err)
		}
		e.release = release
	}
	s.m[cmd.Process.Pid] = e
	return nil
}

// Outcome says why Wait stopped waiting.
type Outcome struct {
	TimedOut bool  // the timeout passed first; the group was killed
	Ctx      error // ctx ended first (its error); the group was killed
	Wait     error // cmd.Wait's error
}

// Wait waits for cmd, started by Start, to exit, for timeout to pass or
// for ctx to end. Then it kills the command's process group (the command
// if it still runs, and whatever it left behind in its group) and reaps
// the command. The leader is not reaped before its group is killed, so the
// group id cannot be reused by then.
func (s *Set) Wait(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) Outcome {
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		// Wait without reaping.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var out Outcome
	select {
	case <-exited:
	case <-timer.C:
		out.TimedOut = true
	case <-ctx.Done():
		out.Ctx = ctx.Err()
	}
	s.kill(pid)
	<-exited
	s.mark(pid) // its pid may be reused once reaped
	out.Wait = cmd.Wait()
	s.reaped(pid)
	return out
}

// kill SIGKILLs pid's process group and its cgroup.
func (s *Set) kill(pid int) {
	Kill(pid)
	s.mu.Lock()
	e := s.m[pid]
	s.mu.Unlock()
	if e != nil && e.group != nil {
		_ = e.group.Kill()
	}
}

// Kill SIGKILLs the process group pgid.
func Kill(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func (s *Set) mark(pid int) {
	s.mu.Lock()
	if e := s.m[pid]; e != nil {
		e.live = false
	}
	s.mu.Unlock()
}

// reaped forgets pid, removes its cgroup and lets its sandbox thread go.
func (s *Set) reaped(pid int) {
	s.mu.Lock()
	e := s.m[pid]
	delete(s.m, pid)
	s.mu.Unlock()
	if e == nil {
		return
	}
	if e.group != nil {
		_ = e.group.Close(time.Second)
	}
	if e.release != nil {
		e.release()
	}
}

// Has reports a command that os/exec has not reaped yet: the keep
// function for sdk.KillAdopted.
func (s *Set) Has(pid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[pid]
	return ok
}

// KillAll kills every running command's group and refuses new ones.
func (s *Set) KillAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for pid, e := range s.m {
		if e.live {
			Kill(pid)
			if e.group != nil {
				_ = e.group.Kill()
			}
		}
	}
}

// Serve serves skill with sdk.Serve, with StopWithParent, and kills the
// commands' groups when the host closes the plugin. It returns 1 when the
// host was already gone, else 0.
func (s *Set) Serve(skill sdk.Skill) int {
	if !s.StopWithParent() {
		return 1
	}
	sdk.Serve(skill)
	s.KillAll()
	return 0
}

// StopWithParent kills the commands' groups, which a signal to the plugin
// would not reach, when the plugin is told to stop (SIGTERM, SIGINT,
// SIGHUP) or its parent (the host) dies, and then exits. It returns false
// when the parent was already gone. It asks the kernel for SIGTERM when
// the parent dies, even by SIGKILL; in a plugin started by the host the
// sdk has already done so on the main thread, where the host's own SIGKILL
// request lives, and ends every descendant when the plugin stops.
func (s *Set) StopWithParent() bool {
	ppid := os.Getppid()
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		s.KillAll()
		// Daemons that left the groups: we are exiting, so every child
		// goes, whoever waits for it.
		sdk.KillAdopted(func(int) bool { return false })
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	if os.Getppid() != ppid {
		s.KillAll()
		return false
	}
	return true
}
