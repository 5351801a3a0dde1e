//go:build linux && !portable

package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/sandbox"
)

// becomeSubreaper makes the host adopt the orphans of its plugins: a
// descendant that called setsid and whose plugin died without ending it
// (a crash, os.Exit, a plugin without sdk.Serve) is reparented here, and
// sweepAdopted ends it.
func becomeSubreaper() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// pluginDescendant reports a process that carries the plugin handshake
// cookie in its environment: a plugin or something a plugin started. The
// host's own children (git, go build) do not have it.
func pluginDescendant(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return bytes.Contains(b, pluginCookie)
}

// Launch says how a plugin's bytes are checked and run here.
func Launch() string {
	return "checked while stopped at exec, or run from a sealed in-memory copy (memfd)"
}

// canTrace: this platform can start a child stopped at exec.
const canTrace = true

// setTrace has the child stop at exec (PTRACE_TRACEME), for startCmd.
func setTrace(attr *syscall.SysProcAttr, on bool) { attr.Ptrace = on }

// startCmd starts cmd; with Ptrace it waits for the child's stop at exec,
// runs atExec and lets the child go on (or kills it). Called on spawn's
// thread, the tracer.
func startCmd(cmd *exec.Cmd, atExec func(pid int) error) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Ptrace {
		return nil
	}
	pid := cmd.Process.Pid
	ws, err := waitStop(pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	if !ws.Stopped() {
		// It died before running anything (Wait4 reaped it).
		return fmt.Errorf("plugin process ended before it ran: %v", ws)
	}
	target := pid
	if how := sandbox.Shimmed(cmd); how != sandbox.NoShim {
		var err error
		target, err = followShim(pid, how == sandbox.ShimFork)
		if err != nil {
			if target != 0 {
				killTraced(target)
			}
			// A shim whose child's exec failed says why on its socket
			// (ETXTBSY, which the runner retries from a sealed copy)
			// and exits: let it.
			if !(how == sandbox.ShimFork && errors.Is(err, errChildEnded)) {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
			_ = cmd.Wait()
			return err
		}
	}
	if atExec != nil {
		err = atExec(target)
	}
	if err != nil {
		if target != pid {
			killTraced(target)
		}
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return err
	}
	// Detach swallows the SIGTRAP of the exec stop.
	if derr := unix.PtraceDetach(target); derr != nil {
		if target != pid {
			killTraced(target)
		}
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return errors.Join(errors.New("let the verified plugin run"), derr)
	}
	return nil
}

// followShim takes a child that the sandbox starts through its shim
// (sandbox.Shimmed), stopped at its first exec, to the exec of the
// plugin, which the check at exec is about, and returns the pid that
// made it, stopped there. The first exec must be this very binary (the
// shim is the running agent); after it the shim runs only its own code.
// With fork, the shim forks the plugin (it stays as the init of the
// plugin's PID namespace): the fork is followed (PTRACE_O_TRACEVFORK,
// os/exec's clone is a vfork), the shim let go, and its child followed
// to its exec; otherwise the shim execs the plugin itself. Signals sent
// to the shim or its child meanwhile are passed on. On an error, a
// non-zero target is the shim's child, still to be killed.
func followShim(pid int, fork bool) (target int, err error) {
	self, err := os.Stat("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("the sandbox shim: %w", err)
	}
	exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return 0, fmt.Errorf("the sandbox shim: %w", err)
	}
	if !os.SameFile(self, exe) {
		return 0, errors.New("the sandbox shim is not this program")
	}
	// TRACEEXEC marks the next exec's stop apart from a SIGTRAP; if this
	// thread died now, EXITKILL would end the unchecked child with it.
	opts := unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_EXITKILL
	if fork {
		opts |= unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK
	}
	if err := unix.PtraceSetOptions(pid, opts); err != nil {
		return 0, fmt.Errorf("the sandbox shim: ptrace options: %w", err)
	}
	if !fork {
		return pid, untilExec(pid, 0)
	}
	child, err := untilFork(pid)
	if err != nil {
		return child, err
	}
	// The child starts traced and stopped (SIGSTOP); the shim, blocked
	// in its vfork until the child execs, goes on untraced.
	if err := unix.PtraceDetach(pid); err != nil {
		return child, fmt.Errorf("the sandbox shim: ptrace detach: %w", err)
	}
	ws, err := waitStop(child)
	if err != nil {
		return child, err
	}
	if !ws.Stopped() {
		return 0, fmt.Errorf("%w: %v", errChildEnded, ws)
	}
	sig := 0
	if s := ws.StopSignal(); s != unix.SIGSTOP {
		sig = int(s)
	}
	if err := untilExec(child, sig); err != nil {
		if errors.Is(err, errChildEnded) {
			return 0, err // reaped as its tracer: nothing to kill
		}
		return child, err
	}
	return child, nil
}

// errChildEnded: the process followed to its exec ended first (a failed
// exec, whose reason its shim reports).
var errChildEnded = errors.New("the sandbox shim's child ended before it ran the plugin")

// killTraced kills the shim's child, which this thread traces, and
// takes its exit as its tracer: until then the child stays a traced
// zombie, and the shim, the init of its PID namespace, cannot end
// (it waits for every process of its namespace), nor cmd.Wait.
func killTraced(pid int) {
	_ = unix.Kill(pid, unix.SIGKILL)
	for {
		ws, err := waitStop(pid)
		if err != nil || ws.Exited() || ws.Signaled() {
			return
		}
		_ = unix.PtraceCont(pid, 0)
	}
}

// waitStop waits for pid's next stop or end.
func waitStop(pid int) (unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ws, fmt.Errorf("wait for the plugin's exec: %w", err)
		}
		return ws, nil
	}
}

// passOn is the signal a tracee stopped as ws says gets on: stop
// signals, which would only park it in a group stop, and ptrace's own
// event stops are dropped.
func passOn(ws unix.WaitStatus) int {
	switch sig := ws.StopSignal(); {
	case sig == unix.SIGTRAP && ws.TrapCause() != 0:
		return 0
	case sig == unix.SIGSTOP, sig == unix.SIGTSTP, sig == unix.SIGTTIN, sig == unix.SIGTTOU:
		return 0
	default:
		return int(sig)
	}
}

// untilExec lets pid run, with sig first, until its exec stop.
func untilExec(pid, sig int) error {
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return fmt.Errorf("the sandbox shim: ptrace: %w", err)
		}
		ws, err := waitStop(pid)
		switch {
		case err != nil:
			return err
		case !ws.Stopped():
			return fmt.Errorf("%w: %v", errChildEnded, ws)
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXEC:
			return nil
		}
		sig = passOn(ws)
	}
}

// untilFork lets the shim run until it forks, and returns the child.
func untilFork(pid int) (int, error) {
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return 0, fmt.Errorf("the sandbox shim: ptrace: %w", err)
		}
		ws, err := waitStop(pid)
		switch {
		case err != nil:
			return 0, err
		case !ws.Stopped():
			return 0, fmt.Errorf("the sandbox shim ended before it ran the plugin: %v", ws)
		case ws.StopSignal() == unix.SIGTRAP && (ws.TrapCause() == unix.PTRACE_EVENT_VFORK || ws.TrapCause() == unix.PTRACE_EVENT_FORK):
			msg, err := unix.PtraceGetEventMsg(pid)
			if err != nil {
				return 0, fmt.Errorf("the sandbox shim: its child: %w", err)
			}
			return int(msg), nil
		}
		sig = passOn(ws)
	}
}
