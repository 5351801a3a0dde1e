package procgroup

import (
	"github.com/agentskills/agent/internal/isolation/sandbox"

	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/agentskills/agent/sdk"
)

// Set tracks the commands in flight so that a plugin told to stop can
// kill their groups first, and so that a sweep of adopted orphans
// (sdk.KillAdopted) never reaps a child os/exec still waits for.
type Set struct {
	owner string // "the exec plugin", for the error after Close
	mu    sync.Mutex
	// m maps a command's pid to its group until the command is reaped.
	m map[int]*Group
	// release ends the parked thread of a sandboxed command (see
	// sandbox.Start) once it is reaped.
	release map[int]func()
	closed  bool
}

// NewSet returns an empty set; owner names the plugin in the error that
// Start returns once the set is closed.
func NewSet(owner string) *Set {
	return &Set{owner: owner, m: map[int]*Group{}, release: map[int]func(){}}
}

// Start starts cmd in a group of its own (see Group), which ends if this
// plugin dies, and tracks it. It refuses once KillAll has run.
func (s *Set) Start(cmd *exec.Cmd) error { return s.StartSandboxed(cmd, nil) }

// StartSandboxed is Start, with cmd confined to p (internal/sandbox) when
// p is not nil.
func (s *Set) StartSandboxed(cmd *exec.Cmd, p *sandbox.Policy) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New(s.owner + " is shutting down")
	}
	g, err := New(cmd)
	if err != nil {
		return err
	}
	var release func()
	if p == nil {
		err = Spawn(cmd)
	} else {
		release, err = sandbox.Start(cmd, *p, (*exec.Cmd).Start)
	}
	if err != nil {
		g.Release()
		return err
	}
	if err := g.Started(); err != nil {
		_ = cmd.Wait()
		g.Release()
		if release != nil {
			release()
		}
		return err
	}
	s.m[cmd.Process.Pid] = g
	if release != nil {
		s.release[cmd.Process.Pid] = release
	}
	return nil
}

// Outcome says why Wait stopped waiting.
type Outcome struct {
	TimedOut bool  // the timeout passed first; the group was killed
	Ctx      error // ctx ended first (its error); the group was killed
	Wait     error // cmd.Wait's error
}

// Wait waits for cmd, started by Start, to exit, for timeout to pass or
// for ctx to end. Then it kills the command's group (the command if it
// still runs, and whatever it left behind in its group) and reaps the
// command (see Group.Wait).
func (s *Set) Wait(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) Outcome {
	pid := cmd.Process.Pid
	s.mu.Lock()
	g := s.m[pid]
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var out Outcome
	select {
	case out.Wait = <-done:
	case <-timer.C:
		out.TimedOut = true
		g.Kill()
		out.Wait = <-done
	case <-ctx.Done():
		out.Ctx = ctx.Err()
		g.Kill()
		out.Wait = <-done
	}
	g.Release()
	s.reaped(pid)
	return out
}

func (s *Set) reaped(pid int) {
	s.mu.Lock()
	delete(s.m, pid)
	release := s.release[pid]
	delete(s.release, pid)
	s.mu.Unlock()
	if release != nil {
		release()
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
	for _, g := range s.m {
		g.Kill()
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
// when the parent was already gone. How the parent's death is noticed is
// the platform's (see onParentExit).
func (s *Set) StopWithParent() bool {
	ppid := os.Getppid()
	sigs := make(chan os.Signal, 1)
	onParentExit(ppid, sigs)
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
