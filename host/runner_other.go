//go:build !linux || portable

package host

import (
	"os/exec"
	"syscall"
)

// The launch fallback (macOS, Windows, and Linux with the portable tag):
// no start stopped at exec, so every start runs the version's private
// copy (seal_other.go); no subreaper, so a plugin's descendant that left
// its group is not adopted, and there is nothing to sweep.
const canTrace = false

// Launch says how a plugin's bytes are checked and run here.
func Launch() string {
	return "private copy in a user-only folder, hashed while copied (does not stop code running as the same user)"
}

func setTrace(*syscall.SysProcAttr, bool) {}

func startCmd(cmd *exec.Cmd, _ func(pid int) error) error { return cmd.Start() }

func becomeSubreaper() {}

func pluginDescendant(int) bool { return false }
