package plugbuild

import "syscall"

// childProcAttr makes go build die with the agent, so a killed add or
// update does not leave a build running for its staging directory. The
// compiler processes go starts still finish by themselves.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
