//go:build unix

package platform

import "syscall"

// Open flags that only Unix has. NoFollow makes opening a symbolic link
// fail (ELOOP) instead of following it; NonBlock keeps opening a FIFO
// from waiting for a writer.
const (
	NoFollow = syscall.O_NOFOLLOW
	NonBlock = syscall.O_NONBLOCK
)
