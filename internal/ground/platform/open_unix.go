//go:build unix

package platform

import (
	"os"
	"syscall"
)

// Open flags that only Unix has. NoFollow makes opening a symbolic link
// fail (ELOOP) instead of following it; NonBlock keeps opening a FIFO
// from waiting for a writer.
const (
	NoFollow = syscall.O_NOFOLLOW
	NonBlock = syscall.O_NONBLOCK
)

// OpenFile is os.OpenFile for a file that is read or written whole and
// at once, as installing writes thousands: os.OpenFile offers every file
// to the poller, and on Linux a regular file is refused, which costs four
// system calls per file (non-blocking on, epoll_ctl, non-blocking off).
// A file from OpenFile blocks its thread as a regular file does anyway,
// and has no deadlines.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, flag|syscall.O_CLOEXEC, syscallMode(perm))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// syscallMode is os's conversion of a FileMode to open(2)'s mode.
func syscallMode(m os.FileMode) uint32 {
	o := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		o |= syscall.S_ISUID
	}
	if m&os.ModeSetgid != 0 {
		o |= syscall.S_ISGID
	}
	if m&os.ModeSticky != 0 {
		o |= syscall.S_ISVTX
	}
	return o
}
