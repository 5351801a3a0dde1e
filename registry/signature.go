package registry

import (
	"context"
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/signing"
)

// ErrNotVerified matches a skill the caller asked to install only if an
// accepted key signed it (AddRequest.RequireSigned) when none did; it
// wraps the reason (signing.ErrUnsigned, ErrUntrustedSigner).
var ErrNotVerified = errors.New("not signed by an accepted signer")

// verifySnapshot checks what was fetched from source against the signer
// policy (SPEC §18) and sets snap.Signer to the accepted key that signed
// it. Where the policy requires a signature for source, a skill that no
// accepted key signed is refused; elsewhere it is fetched as it is, to
// be trusted or not as the user says. A signature that names an accepted
// key but does not verify is refused everywhere. Nothing is asked of the
// network but the registry the artifact came from (its referrers).
//
// What is checked: for git, the annotated tag object (a tag ref) and the
// commit, whichever an accepted key signed; for an OCI artifact (a
// source or a mirror), the Sigstore bundles attached to its manifest.
func (s verified) verifySnapshot(ctx context.Context, source string, snap *gitsrc.Snapshot, a *ocisrc.Artifact) error {
	if s.policy.Empty() {
		return nil
	}
	keys, required := s.policy.Keys(source)
	if a != nil && a.Ref.Repo() != source {
		// A mirror: keys listed for the mirror's repository count too.
		k, r := s.policy.Keys(a.Ref.Repo())
		keys, required = append(keys, k...), required || r
	}
	if len(keys) == 0 && !required {
		return nil
	}
	signer, why := s.signer(ctx, snap, a, keys)
	what := source + " at " + gitsrc.Short(snap.Commit)
	switch {
	case signer != nil:
		snap.Signer = signer.String()
		return nil
	case errors.Is(why, signing.ErrBadSignature), errors.Is(why, signing.ErrRelabelled):
		return fmt.Errorf("verify %s: %w", what, why)
	case required:
		return fmt.Errorf("verify %s: the signer policy requires a signature by an accepted key: %w", what, why)
	}
	snap.Signer = ""
	return nil
}

// signer is the accepted key that signed snap (or a), or nil and why not.
func (s verified) signer(ctx context.Context, snap *gitsrc.Snapshot, a *ocisrc.Artifact, keys []signing.Key) (*signing.Key, error) {
	var errs []error
	if a != nil {
		bundles, err := s.oci.Referrers(ctx, a.Ref, a.Descriptor(), signing.BundleMediaType)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot list its signatures: %v", signing.ErrUnsigned, err)
		}
		for _, b := range bundles {
			k, err := signing.VerifyBundle(b, a.Ref.Digest, keys)
			if err == nil {
				if err := bindsVersion(a); err != nil {
					return nil, err
				}
				return &k, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("%s: %w (no Sigstore bundle refers to it; sign it with agent skill sign)", a.Ref.Digest, signing.ErrUnsigned)
		}
		return nil, worst(errs)
	}
	objs, err := snap.Signed()
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		k, err := signing.VerifyGit(o, keys)
		if err == nil {
			return &k, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, signing.ErrUnsigned
	}
	return nil, worst(errs)
}

// bindsVersion refuses a signed artifact pulled by a version tag that is
// not the version it was signed as (Artifact.SignedVersion): a tag 2.0.0
// pointed at the signed 1.0.0 manifest would otherwise install as a
// signed 2.0.0. A tag that is no version (latest) claims none.
func bindsVersion(a *ocisrc.Artifact) error {
	tagged := ocisrc.VersionOf(a.Ref.Tag)
	if tagged == nil {
		return nil
	}
	signed := a.SignedVersion()
	if v, err := semver.NewVersion(signed); err == nil && v.String() == tagged.String() {
		return nil
	}
	as := "as version " + signed
	if signed == "" {
		as = "with no version (its SKILL.md names none)"
	}
	return fmt.Errorf("%w: the tag %s names the artifact %s, which was signed %s, not %s",
		signing.ErrRelabelled, a.Ref.Tag, gitsrc.Short(a.Ref.Digest), as, tagged)
}

// worst is the error that says most: a signature that does not verify,
// then one by a key not accepted, then none.
func worst(errs []error) error {
	for _, target := range []error{signing.ErrRelabelled, signing.ErrBadSignature, signing.ErrUntrustedSigner} {
		for _, e := range errs {
			if errors.Is(e, target) {
				return e
			}
		}
	}
	return errs[0]
}
