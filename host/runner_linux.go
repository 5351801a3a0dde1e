package host

import "syscall"

func sysProcAttr() *syscall.SysProcAttr {
	// The kernel kills the plugin if the host dies, even by SIGKILL.
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
