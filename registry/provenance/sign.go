package provenance

import (
	"context"
	"fmt"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/signing"
)

// SignRequest is what `agent skill sign` asks for.
type SignRequest struct {
	// Skill is oci://HOST/REPO:TAG (or @sha256:…), or the name of a skill
	// installed from an OCI registry.
	Skill string
	// Key is the private key's PEM (PKCS#8, EC or OpenSSH), ed25519 or
	// ECDSA.
	Key []byte
}

// SignedArtifact is a signature attached to a skill artifact.
type SignedArtifact struct {
	Ref      ocisrc.Reference // the artifact signed, with its digest
	Signer   signing.Key
	Referrer string // the digest of the manifest holding the bundle
}

// Sign signs a skill artifact's manifest digest with req.Key (a Sigstore
// bundle, signing.SignBundle) and attaches the bundle to it in its
// registry as an OCI referrer (signing.BundleMediaType). The artifact is
// pulled and checked first: only a skill artifact whose files match its
// digests is signed.
func (s *Publisher) Sign(ctx context.Context, req SignRequest) (SignedArtifact, error) {
	out, err := s.sign(ctx, req)
	if err != nil {
		return SignedArtifact{}, fmt.Errorf("sign %s: %w", req.Skill, err)
	}
	return out, nil
}

func (s *Publisher) sign(ctx context.Context, req SignRequest) (SignedArtifact, error) {
	key, err := signing.ParsePrivateKey(req.Key)
	if err != nil {
		return SignedArtifact{}, err
	}
	pub, err := signing.FromPublic(key.Public())
	if err != nil {
		return SignedArtifact{}, err
	}
	raw := req.Skill
	if !ocisrc.IsOCI(raw) {
		e, err := s.Store.Get(raw)
		if err != nil {
			return SignedArtifact{}, err
		}
		if e.Source != registry.SourceOCI {
			return SignedArtifact{}, fmt.Errorf("%w: %s was installed from %s, not from an OCI registry; publish it (agent skill publish) and sign what was pushed, or sign git commits and tags with git", gitsrc.ErrUnsupportedSource, e.Canonical, e.URL)
		}
		raw = e.URL + "@" + e.CommitSHA
	}
	ref, err := ocisrc.Parse(raw)
	if err != nil {
		return SignedArtifact{}, fmt.Errorf("%w: %v", gitsrc.ErrUnsupportedSource, err)
	}
	if ref.Constraint != "" {
		return SignedArtifact{}, fmt.Errorf("%w: sign a tag or a digest, not a version constraint", gitsrc.ErrUnsupportedSource)
	}
	c := s.ociClient()
	a, err := c.Pull(ctx, ref)
	if err != nil {
		return SignedArtifact{}, err
	}
	bundle, err := signing.SignBundle(key, a.Ref.Repo(), a.Ref.Digest)
	if err != nil {
		return SignedArtifact{}, err
	}
	// What is attached must verify, with the key as a signer policy
	// would list it.
	if _, err := signing.VerifyBundle(bundle, a.Ref.Digest, []signing.Key{pub}); err != nil {
		return SignedArtifact{}, err
	}
	desc, err := c.Attach(ctx, a.Ref, a.Descriptor(), signing.BundleMediaType, signing.BundleMediaType, bundle)
	if err != nil {
		return SignedArtifact{}, err
	}
	return SignedArtifact{Ref: a.Ref, Signer: pub, Referrer: desc.Digest.String()}, nil
}
