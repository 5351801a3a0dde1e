package install

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/agentskills/agent/internal/build/plugbuild"
)

// runnable: Windows records no execute bit (os.Stat never sets one), so
// the file's first bytes decide (windowsProgram).
func runnable(path, rel string, _ fs.FileInfo) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: plugin.command %q: %v", plugbuild.ErrBadPath, rel, err)
	}
	defer f.Close()
	head := make([]byte, 2)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return fmt.Errorf("%w: plugin.command %q: %v", plugbuild.ErrBadPath, rel, err)
	}
	return windowsProgram(rel, head[:n])
}
