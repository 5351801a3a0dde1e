package manifest

import "errors"

// Sentinel errors. Functions wrap them with the failing operation, so callers
// test with errors.Is and show err.Error() to the user.
var (
	ErrInvalidName     = errors.New("invalid skill name")
	ErrInvalidManifest = errors.New("invalid SKILL.md")
	ErrIncompatible    = errors.New("skill is incompatible with this agent version")
)
