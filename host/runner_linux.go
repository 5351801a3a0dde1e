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

	"github.com/agentskills/agent/internal/sandbox"
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
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("wait for the plugin's exec: %w", err)
		}
		break
	}
	if !ws.Stopped() {
		// It died before running anything (Wait4 reaped it).
		return fmt.Errorf("plugin process ended before it ran: %v", ws)
	}
	if sandbox.Shimmed(cmd) {
		reaped, err := followShim(pid)
		if err != nil {
			if !reaped {
				_ = unix.Kill(pid, unix.SIGKILL)
				_ = cmd.Wait()
			}
			return err
		}
	}
	var err error
	if atExec != nil {
		err = atExec(pid)
	}
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return err
	}
	// Detach swallows the SIGTRAP of the exec stop.
	if derr := unix.PtraceDetach(pid); derr != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return errors.Join(errors.New("let the verified plugin run"), derr)
	}
	return nil
}

// followShim takes a child that the sandbox starts through its shim
// (sandbox.Shimmed), stopped at its first exec, to its second: the exec
// of the plugin, which the check at exec is about. The first must be
// this very binary (the shim is the running agent); between the two the
// shim runs only its own code, and signals sent to it meanwhile are
// passed on. reaped says the child is gone.
func followShim(pid int) (reaped bool, err error) {
	self, err := os.Stat("/proc/self/exe")
	if err != nil {
		return false, fmt.Errorf("the sandbox shim: %w", err)
	}
	exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false, fmt.Errorf("the sandbox shim: %w", err)
	}
	if !os.SameFile(self, exe) {
		return false, errors.New("the sandbox shim is not this program")
	}
	// TRACEEXEC marks the next exec's stop apart from a SIGTRAP; if this
	// thread died now, EXITKILL would end the unchecked child with it.
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXEC|unix.PTRACE_O_EXITKILL); err != nil {
		return false, fmt.Errorf("the sandbox shim: ptrace options: %w", err)
	}
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return false, fmt.Errorf("the sandbox shim: ptrace: %w", err)
		}
		var ws unix.WaitStatus
		for {
			_, err = unix.Wait4(pid, &ws, unix.WALL, nil)
			if err != unix.EINTR {
				break
			}
		}
		switch {
		case err != nil:
			return false, fmt.Errorf("wait for the plugin's exec: %w", err)
		case !ws.Stopped():
			return true, fmt.Errorf("the sandbox shim ended before it ran the plugin: %v", ws)
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXEC:
			return false, nil
		}
		// A signal for the shim: delivered, but stop signals, which
		// would only park it in a group stop.
		switch sig = int(ws.StopSignal()); unix.Signal(sig) {
		case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
			sig = 0
		}
	}
}
