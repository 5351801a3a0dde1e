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
