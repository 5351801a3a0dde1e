//go:build !windows

package install

import (
	"fmt"
	"io/fs"

	"github.com/agentskills/agent/internal/build/plugbuild"
)

// runnable: the execute bit, as git records it, says a file is a program;
// the kernel runs a "#!" script through its interpreter.
func runnable(_, rel string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: plugin.command %q is not an executable file; commit it with the executable bit set", plugbuild.ErrBadPath, rel)
	}
	return nil
}
