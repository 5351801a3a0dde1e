package exec

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/sdk"
)

// stopWithParent makes the plugin clean up when it is told to stop or its
// parent dies. Scripts run in their own process groups, which a signal to
// the plugin would not reach, so on SIGTERM, SIGINT or SIGHUP every running
// script's group is killed before the plugin exits; and the kernel is asked
// to send SIGTERM when the parent (the host) dies, even by SIGKILL. It
// returns false when the parent was already gone.
func stopWithParent() bool {
	ppid := os.Getppid()
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		running.killAll()
		// Daemons that left the scripts' groups: we are exiting, so every
		// child goes, whoever waits for it.
		sdk.KillAdopted(func(int) bool { return false })
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	if os.Getppid() != ppid {
		running.killAll()
		return false
	}
	return true
}
