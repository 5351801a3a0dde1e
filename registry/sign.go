package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentskills/agent/internal/ground/atomicfile"
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
func (s *Store) Sign(ctx context.Context, req SignRequest) (SignedArtifact, error) {
	out, err := s.sign(ctx, req)
	if err != nil {
		return SignedArtifact{}, fmt.Errorf("sign %s: %w", req.Skill, err)
	}
	return out, nil
}

func (s *Store) sign(ctx context.Context, req SignRequest) (SignedArtifact, error) {
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
		e, err := s.Get(raw)
		if err != nil {
			return SignedArtifact{}, err
		}
		if e.Source != SourceOCI {
			return SignedArtifact{}, fmt.Errorf("%w: %s was installed from %s, not from an OCI registry; publish it (agent skill publish) and sign what was pushed, or sign git commits and tags with git", gitsrc.ErrUnsupportedSource, e.Canonical, e.GitURL)
		}
		raw = e.GitURL + "@" + e.CommitSHA
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

// SignersPath is $AGENT_HOME/signers.json: the signers `agent skill
// trust --signer` recorded.
func (s *Store) SignersPath() string { return filepath.Join(s.Home, "signers.json") }

type signersFile struct {
	Signers []signing.Signer `json:"signers"`
}

// Signers reads the recorded signers; a missing file is none, a damaged
// one is ErrCorrupt naming it.
func (s *Store) Signers() ([]signing.Signer, error) {
	var f signersFile
	err := readState(s.SignersPath(), &f, "fix it, or delete it and add the signers again (agent skill trust --signer KEY)")
	return f.Signers, err
}

// readState decodes the JSON state file at path into v: a missing file
// leaves v as it is, a damaged one is ErrCorrupt naming it with advice.
func readState(path string, v any, advice string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v; %s", ErrCorrupt, path, err, advice)
	}
	return nil
}

// AddSigner records an accepted signer: its public key (the text, not a
// path, so that the record stands alone) and the sources it is for (none:
// every source). The same key recorded again has its sources merged.
// It returns the parsed key.
func (s *Store) AddSigner(keyText []byte, sources []string) (signing.Key, error) {
	k, err := signing.ParseKey(keyText)
	if err != nil {
		return signing.Key{}, fmt.Errorf("add signer: %w", err)
	}
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		return signing.Key{}, err
	}
	err = s.lockedThen(func(entries []Entry) ([]Entry, error) {
		cur, err := s.Signers()
		if err != nil {
			return nil, err
		}
		for i, c := range cur {
			ck, err := signing.ParseKey([]byte(c.Key))
			if err != nil || ck.Fingerprint != k.Fingerprint {
				continue
			}
			switch {
			case len(sources) == 0 || len(c.Sources) == 0:
				cur[i].Sources = nil
			default:
				for _, src := range sources {
					if !slices.Contains(c.Sources, src) {
						cur[i].Sources = append(cur[i].Sources, src)
					}
				}
			}
			return nil, s.writeSigners(cur)
		}
		return nil, s.writeSigners(append(cur, signing.Signer{Key: string(keyText), Sources: sources}))
	}, nil)
	if err != nil {
		return signing.Key{}, fmt.Errorf("add signer %s: %w", k.Fingerprint, err)
	}
	return k, nil
}

func (s *Store) writeSigners(signers []signing.Signer) error {
	b, err := json.MarshalIndent(signersFile{Signers: signers}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.SignersPath(), append(b, '\n'), 0o644)
}
