//go:build !windows

package atomicfile

// renameHeldOpen: a rename over an open file succeeds on Unix, so there is
// nothing to wait for.
func renameHeldOpen(error) bool { return false }
