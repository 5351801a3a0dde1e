package host

import (
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
