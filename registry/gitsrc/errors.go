package gitsrc

import "errors"

// Sentinel errors. Functions wrap them with the failing operation, so callers
// test with errors.Is and show err.Error() to the user.
var (
	ErrUnsupportedSource = errors.New("unsupported source")
	ErrRepoNotFound      = errors.New("repository not found")
	ErrAuthRequired      = errors.New("authentication required")
	ErrUnreachable       = errors.New("host unreachable")
	ErrNoSkill           = errors.New("no skill found")
	ErrAmbiguousSkill    = errors.New("several skills found")
	ErrRefNotFound       = errors.New("ref not found")
	ErrNoMatchingVersion = errors.New("no matching version")
	// ErrNoTags is a version constraint on a repository without version
	// tags; it comes wrapped with ErrNoMatchingVersion.
	ErrNoTags = errors.New("no version tags")
	// ErrUnsafeEntry is a tree entry no checkout may write: named ".",
	// "..", empty, or holding "/" or NUL (SPEC §12).
	ErrUnsafeEntry = errors.New("unsafe git tree entry")
	// ErrTooLarge is a file or skill over its size limit (Limits).
	ErrTooLarge = errors.New("too large")
	// ErrWithheld is a server that offered a partial fetch (filter) and
	// then did not send an object it was asked for.
	ErrWithheld = errors.New("the server withheld objects")
)
