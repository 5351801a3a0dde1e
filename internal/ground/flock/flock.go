package flock

import (
	"errors"
	"os"
)

// ErrBusy is TryLock's answer when another open file holds the lock.
var ErrBusy = errors.New("file is locked by another process")

// Lock waits for an exclusive lock on f.
func Lock(f *os.File) error { return lock(f, true) }

// TryLock takes an exclusive lock on f if no one holds it, else returns
// ErrBusy at once.
func TryLock(f *os.File) error { return lock(f, false) }

// Unlock releases f's lock; closing f releases it too.
func Unlock(f *os.File) error { return unlock(f) }
