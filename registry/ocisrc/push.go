package ocisrc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	oras "oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
)

// Push uploads the files names (slash paths under dir: the files the h1:
// hash covers) as one skill artifact and tags it ref.Tag. cfg.H1 must be
// the folder's h1: hash; a file that changed since it was hashed fails
// the push. It returns the manifest's descriptor.
func (c *Client) Push(ctx context.Context, ref Reference, dir string, names []string, cfg Config) (ocispec.Descriptor, error) {
	op := "push " + ref.String()
	if ref.Tag == "" || ref.Digest != "" || ref.Constraint != "" {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w: give a tag to push to (oci://HOST/REPO:TAG)", op, ErrReference)
	}
	repo, err := c.repository(ref)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", op, err)
	}
	layers := make([]ocispec.Descriptor, len(names))
	sums := make(map[string]string, len(names))
	for i, n := range names {
		if !validPath(n) {
			return ocispec.Descriptor{}, fmt.Errorf("%s: file name %q is not a slash path inside the skill", op, n)
		}
		d, err := describeFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("%s: %w", op, err)
		}
		d.Annotations = map[string]string{AnnotationPath: n}
		if d.exec {
			d.Annotations[AnnotationExecutable] = "true"
		}
		layers[i] = d.Descriptor
		sums[n] = d.Digest.Encoded()
	}
	h1, err := H1(sums)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", op, err)
	}
	if h1 != cfg.H1 {
		return ocispec.Descriptor{}, fmt.Errorf("%s: the files changed while publishing (hashed %s, pushing %s); try again", op, cfg.H1, h1)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.concurrency())
	pushed := map[digest.Digest]bool{}
	for i, n := range names {
		if pushed[layers[i].Digest] {
			continue
		}
		pushed[layers[i].Digest] = true
		desc, p := layers[i], filepath.Join(dir, filepath.FromSlash(n))
		g.Go(func() error { return pushFile(gctx, repo, desc, p) })
	}
	if err := g.Wait(); err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", op, err)
	}
	cfgDesc := ocispec.Descriptor{MediaType: ConfigMediaType, Digest: digest.FromBytes(cfgJSON), Size: int64(len(cfgJSON))}
	if err := pushBytes(ctx, repo, cfgDesc, cfgJSON); err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	ann := map[string]string{ocispec.AnnotationTitle: cfg.Name}
	if cfg.Version != "" {
		ann[ocispec.AnnotationVersion] = cfg.Version
	}
	if cfg.Description != "" {
		ann[ocispec.AnnotationDescription] = truncate(cfg.Description, 1024)
	}
	if cfg.Origin != nil {
		ann[ocispec.AnnotationSource] = cfg.Origin.Source
		ann[ocispec.AnnotationRevision] = cfg.Origin.Commit
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers: layers, ConfigDescriptor: &cfgDesc, ManifestAnnotations: ann,
	})
	if err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	if err := repo.Tag(ctx, desc, ref.Tag); err != nil {
		return ocispec.Descriptor{}, classify(op, err)
	}
	return desc, nil
}

type fileDesc struct {
	ocispec.Descriptor
	exec bool
}

func describeFile(p string) (fileDesc, error) {
	f, err := os.Open(p)
	if err != nil {
		return fileDesc{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileDesc{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileDesc{}, fmt.Errorf("%s is not a regular file", p)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fileDesc{}, err
	}
	return fileDesc{
		Descriptor: ocispec.Descriptor{MediaType: FileMediaType, Digest: digest.NewDigestFromEncoded(digest.SHA256, hex.EncodeToString(h.Sum(nil))), Size: n},
		exec:       fi.Mode()&0o111 != 0,
	}, nil
}

// pushFile uploads one file unless the repository has its blob already.
func pushFile(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, p string) error {
	if ok, err := repo.Blobs().Exists(ctx, desc); err == nil && ok {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := repo.Blobs().Push(ctx, desc, io.LimitReader(f, desc.Size)); err != nil {
		return fmt.Errorf("upload %s: %w", p, err)
	}
	return nil
}

func pushBytes(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, b []byte) error {
	if ok, err := repo.Blobs().Exists(ctx, desc); err == nil && ok {
		return nil
	}
	return repo.Blobs().Push(ctx, desc, bytes.NewReader(b))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
