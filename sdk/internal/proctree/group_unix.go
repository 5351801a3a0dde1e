//go:build unix && (!linux || portable)

package proctree

import (
	"os"
	"syscall"
)

// KillGroup, for a plugin about to exit because its host is gone, kills the
// process group this process leads (the host started it in one), itself
// included: without a subreaper or a parent-death signal, that is how what
// it started ends with it. It does nothing when this process does not lead
// its group (started by hand), so as not to kill its parent's group.
func KillGroup() {
	if pid := os.Getpid(); syscall.Getpgrp() == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
