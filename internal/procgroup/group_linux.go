//go:build linux && !portable

package procgroup

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysGroup on Linux: a process group of its own, and the kernel kills the
// leader if the thread that started it dies (even by SIGKILL). Descendants
// that leave the group (setsid) are the subreaper's: the sdk makes every
// plugin one, and the host one for its plugins.
type sysGroup struct{}

func (sysGroup) prepare(cmd *exec.Cmd) error {
	attr := sysProcAttr(cmd)
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
	return nil
}

func (sysGroup) started(*exec.Cmd) error { return nil }
func (sysGroup) kill(pid int)            { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func (sysGroup) stop(pid int)            { _ = syscall.Kill(pid, syscall.SIGTERM) }
func (sysGroup) release()                {}

// waitExit returns once pid has exited, without reaping it: until os/exec
// reaps it, its pid and process group id cannot be reused.
func (sysGroup) waitExit(pid int) bool {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	return true
}

// onParentExit has the kernel send SIGTERM to this process when its parent
// dies (even by SIGKILL); sigs receives it once Notify'd.
func onParentExit(int, chan<- os.Signal) {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}

// Protections names what holds a started command's processes together
// here, for agent check.
func Protections() []string {
	return []string{"process group", "parent-death signal", "subreaper (setsid descendants)"}
}
