//go:build windows

package platform

import "os"

// Windows has neither flag. Creating a symbolic link there needs a
// privilege or developer mode, os.Root keeps links inside their root, and
// a FIFO cannot be made by writing a file; callers that must refuse links
// check with Lstat as well.
const (
	NoFollow = 0
	NonBlock = 0
)

// OpenFile is os.OpenFile: Windows offers no file to a poller on open.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
