package ocisrc

import "errors"

// Sentinel errors; each is wrapped with the operation that failed.
var (
	// ErrReference matches an oci:// address that cannot be parsed.
	ErrReference = errors.New("not an OCI reference")
	// ErrDigestMismatch matches content whose sha256 is not the digest it
	// was fetched by: a manifest, config or file changed in the registry
	// or on the way.
	ErrDigestMismatch = errors.New("content does not match its digest")
	// ErrNotSkill matches an artifact that is not an agent skill.
	ErrNotSkill = errors.New("not an agent skill artifact")
	// ErrNotFound matches a repository, tag or digest the registry does
	// not hold.
	ErrNotFound = errors.New("not found in the OCI registry")
	// ErrNoMatchingVersion matches a constraint no tag satisfies.
	ErrNoMatchingVersion = errors.New("no tag matches the version constraint")
	// ErrTooLarge matches an artifact past the size limits.
	ErrTooLarge = errors.New("artifact too large")
)
