package registry

import "golang.org/x/sys/unix"

// exchange atomically swaps two directories (renameat2 RENAME_EXCHANGE), so
// that a reader always finds a complete skill folder at its path.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
