package signing

import "errors"

// Sentinel errors; each is wrapped with what was being checked.
var (
	// ErrUnsigned matches a skill with no signature where the policy asks
	// for one.
	ErrUnsigned = errors.New("not signed")
	// ErrUntrustedSigner matches a signature by a key the policy does not
	// list for the source.
	ErrUntrustedSigner = errors.New("signed by a key the signer policy does not accept")
	// ErrBadSignature matches a signature that does not verify: the
	// signed content changed, or the signature is damaged.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrRelabelled matches a signed release fetched under another name:
	// a git tag object whose tag header is not the ref it was fetched as,
	// or an OCI artifact whose signed version is not its tag's. A
	// signature binds content and its version; a ref that relabels it
	// is refused.
	ErrRelabelled = errors.New("signed release fetched under another name")
	// ErrKey matches a key that cannot be read or used.
	ErrKey = errors.New("unusable key")
)
