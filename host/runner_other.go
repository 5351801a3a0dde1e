//go:build !linux

package host

import (
	"os/exec"
	"syscall"
)

// sysProcAttr: no Pdeathsig outside Linux; sdk.Serve's parent poll is the
// only guard there.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Without waitid(WNOWAIT) the group is killed after the reap.
const waitNoReap = false

func waitExit(int) {}

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

const canTrace = false

func startCmd(cmd *exec.Cmd, _ func(pid int) error) error { return cmd.Start() }

func becomeSubreaper() {}

func pluginDescendant(int) bool { return false }

func reapAdopted([]int, int) {}
