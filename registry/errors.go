package registry

import "errors"

// Sentinel errors. Functions wrap them with the failing operation, so callers
// test with errors.Is and show err.Error() to the user.
var (
	ErrNotFound         = errors.New("skill not installed")
	ErrAlreadyInstalled = errors.New("skill already installed")
	ErrCorrupt          = errors.New("registry file is corrupt")
	ErrModified         = errors.New("installed skill was modified after install")
	ErrCommitMismatch   = errors.New("fetched commit is not the pinned one")
	ErrLockCorrupt      = errors.New("lock file is invalid")
	ErrLockConflict     = errors.New("lock conflict")
	ErrHashMismatch     = errors.New("skill folder does not match the lock's h1: hash")
	ErrNoPrevious       = errors.New("no previous commit to roll back to")
	ErrReservedName     = errors.New("is the name of a skill bundled with agent")
)
