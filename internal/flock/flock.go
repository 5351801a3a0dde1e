// Package flock takes advisory whole-file locks (flock(2)) that serialise
// writers across processes. It is a leaf: it imports nothing of the project.
package flock

import (
	"os"
	"syscall"
)

// Do applies how (syscall.LOCK_EX, LOCK_SH or LOCK_UN, optionally with
// LOCK_NB) to f, retrying when a signal interrupts the wait.
func Do(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
