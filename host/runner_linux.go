package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func sysProcAttr() *syscall.SysProcAttr {
	// Its own process group, so that killing the plugin kills what it
	// started; and the kernel kills the plugin if the host dies, even by
	// SIGKILL (sdk.Serve turns that into a SIGTERM it can clean up after).
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

const waitNoReap = true

// waitExit returns once pid has exited, without reaping it: until
// os/exec reaps it, its pid and process group id cannot be reused.
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

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

// canTrace: this platform can start a child stopped at exec.
const canTrace = true

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

// reapAdopted reaps the processes in pids (killed members of a plugin's
// cgroup) that are this process's children, other than the plugin leader
// and any plugin os/exec still waits for.
func reapAdopted(pids []int, leader int) {
	self := os.Getpid()
	leaders.mu.Lock()
	defer leaders.mu.Unlock()
	for _, pid := range pids {
		if pid == leader || leaders.m[pid] || parentOf(pid) != self {
			continue
		}
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED, nil) == unix.EINTR {
		}
	}
}

// parentOf reads pid's parent from /proc, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
