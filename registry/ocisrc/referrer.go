package ocisrc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	oras "oras.land/oras-go/v2"
)

// Limits on what Referrers reads.
const (
	maxReferrers     = 32
	maxReferrerBytes = 1 << 20
)

// Descriptor is the artifact's manifest as a descriptor: the subject of
// what is attached to it.
func (a *Artifact) Descriptor() ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.Digest(a.Ref.Digest), Size: int64(len(a.Manifest))}
}

// Attach pushes blob, of mediaType, as an artifact of artifactType whose
// subject is the manifest subject (in ref's repository): an OCI referrer.
// oras-go lists it through the registry's referrers API where there is
// one, and otherwise in the index tagged sha256-<hex of the subject>
// (the OCI referrers tag scheme), which it updates itself.
func (c *Client) Attach(ctx context.Context, ref Reference, subject ocispec.Descriptor, artifactType, mediaType string, blob []byte) (ocispec.Descriptor, error) {
	op := "attach to " + ref.Repo() + "@" + subject.Digest.String()
	repo, err := c.repository(ref)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", op, err)
	}
	layer := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(blob), Size: int64(len(blob))}
	if err := pushBytes(ctx, repo, layer, blob); err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{
		Subject: &subject, Layers: []ocispec.Descriptor{layer},
	})
	if err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	return desc, nil
}

// Referrers returns the first layer of each artifact of artifactType
// that refers to subject (in ref's repository), each checked against its
// digest. A registry without the referrers API is read through the tag
// scheme, by oras-go.
func (c *Client) Referrers(ctx context.Context, ref Reference, subject ocispec.Descriptor, artifactType string) ([][]byte, error) {
	op := "list what refers to " + ref.Repo() + "@" + subject.Digest.String()
	repo, err := c.repository(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var descs []ocispec.Descriptor
	err = repo.Referrers(ctx, subject, artifactType, func(ds []ocispec.Descriptor) error {
		descs = append(descs, ds...)
		if len(descs) > maxReferrers {
			return fmt.Errorf("%w: more than %d referrers of type %s", ErrTooLarge, maxReferrers, artifactType)
		}
		return nil
	})
	if err != nil {
		return nil, classify(op, err)
	}
	var out [][]byte
	for _, d := range descs {
		if d.Size > maxManifestBytes {
			continue
		}
		_, rc, err := repo.FetchReference(ctx, d.Digest.String())
		if err != nil {
			return nil, classify(op, err)
		}
		raw, err := readLimited(rc, maxManifestBytes, "a referrer's manifest")
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if err := checkSum("a referrer's manifest", d.Digest.String(), raw); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(raw, &m); err != nil || len(m.Layers) == 0 || m.Subject == nil || m.Subject.Digest != subject.Digest {
			continue
		}
		l := m.Layers[0]
		if l.Size > maxReferrerBytes {
			continue
		}
		b, err := fetchBlob(ctx, repo, l, "a referrer's content")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, b)
	}
	return out, nil
}
