//go:build unix && (!linux || portable)

package procgroup

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// sysGroup on macOS (and Linux with the portable tag): a process group of
// its own and nothing more. There is no parent-death signal (the plugin
// watches its parent instead, see onParentExit) and no subreaper, so a
// descendant that calls setsid leaves the group and outlives it.
type sysGroup struct{}

func (sysGroup) prepare(cmd *exec.Cmd) error {
	sysProcAttr(cmd).Setpgid = true
	return nil
}

func (sysGroup) started(*exec.Cmd) error { return nil }
func (sysGroup) kill(pid int)            { _ = syscall.Kill(-pid, syscall.SIGKILL) }
func (sysGroup) stop(pid int)            { _ = syscall.Kill(pid, syscall.SIGTERM) }
func (sysGroup) release()                {}

// waitExit cannot wait without reaping here (no waitid with WNOWAIT in
// Go's darwin syscalls): the group is killed right after the reap. A group
// id is not reused while the group has members, so that kill still finds
// the leftovers.
func (sysGroup) waitExit(int) bool { return false }

// parentPoll is how often a plugin looks for its parent.
const parentPoll = 200 * time.Millisecond

// onParentExit polls for the parent's death (the kernel then reparents
// this process, and Getppid changes) and sends SIGTERM to sigs.
func onParentExit(ppid int, sigs chan<- os.Signal) {
	go func() {
		for os.Getppid() == ppid {
			time.Sleep(parentPoll)
		}
		sigs <- syscall.SIGTERM
	}()
}

// Protections names what holds a started command's processes together
// here, for agent check.
func Protections() []string { return []string{"process group only", "parent watch (polling)"} }

// UseSession: cgroup sessions are a Linux feature; nothing to do here.
func UseSession() {}
