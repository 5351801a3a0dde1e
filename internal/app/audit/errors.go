package audit

import "errors"

var (
	// ErrRule is a rule file that cannot be used: bad YAML, a missing
	// field, a bad pattern, an unknown check, or examples that fail.
	ErrRule = errors.New("invalid audit rule")
	// ErrSeverity is a severity name that is none of the known ones.
	ErrSeverity = errors.New("unknown severity")
)
