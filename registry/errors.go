package registry

import "errors"

// Sentinel errors. Functions wrap them with the failing operation, so callers
// test with errors.Is and show err.Error() to the user.
var (
	ErrInvalidName       = errors.New("invalid skill name")
	ErrInvalidManifest   = errors.New("invalid SKILL.md")
	ErrNotFound          = errors.New("skill not installed")
	ErrAlreadyInstalled  = errors.New("skill already installed")
	ErrCorrupt           = errors.New("registry file is corrupt")
	ErrIncompatible      = errors.New("skill is incompatible with this agent version")
	ErrUnsupportedSource = errors.New("unsupported source")
	ErrRepoNotFound      = errors.New("repository not found")
	ErrAuthRequired      = errors.New("authentication required")
	ErrUnreachable       = errors.New("host unreachable")
	ErrNoSkill           = errors.New("no skill found")
	ErrAmbiguousSkill    = errors.New("several skills found")
	ErrRefNotFound       = errors.New("ref not found")
	ErrNoMatchingVersion = errors.New("no matching version")
	ErrModified          = errors.New("installed skill was modified after install")
	ErrCommitMismatch    = errors.New("fetched commit is not the pinned one")
	ErrLockCorrupt       = errors.New("lock file is invalid")
	ErrLockConflict      = errors.New("lock conflict")
	ErrHashMismatch      = errors.New("skill folder does not match the lock's h1: hash")
	ErrNoPrevious        = errors.New("no previous commit to roll back to")
)
