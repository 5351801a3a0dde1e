//go:build windows

package platform

// Windows has neither flag. Creating a symbolic link there needs a
// privilege or developer mode, os.Root keeps links inside their root, and
// a FIFO cannot be made by writing a file; callers that must refuse links
// check with Lstat as well.
const (
	NoFollow = 0
	NonBlock = 0
)
