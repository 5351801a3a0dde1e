package ocisrc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/registry/remote"
)

// Resolve fills ref.Digest: for a tag, the digest the tag points to now;
// for a constraint (or neither tag nor digest: the highest version), the
// highest semver tag that satisfies it, with ref.Tag set to that tag. A
// digest is returned as it is, without asking the registry.
func (c *Client) Resolve(ctx context.Context, ref Reference) (Reference, error) {
	if ref.Digest != "" {
		return ref, nil
	}
	op := "resolve " + ref.String()
	repo, err := c.repository(ref)
	if err != nil {
		return ref, fmt.Errorf("%s: %w", op, err)
	}
	if ref.Tag == "" {
		tag, err := c.highestTag(ctx, repo, ref)
		if err != nil {
			return ref, err
		}
		ref.Tag = tag
	}
	desc, err := repo.Resolve(ctx, ref.Tag)
	if err != nil {
		return ref, classify(op, err)
	}
	if desc.Digest.Algorithm() != "sha256" {
		return ref, fmt.Errorf("%s: the registry answered digest %s; only sha256 is accepted", op, desc.Digest)
	}
	ref.Digest = desc.Digest.String()
	return ref, nil
}

// Tags lists the repository's tags.
func (c *Client) Tags(ctx context.Context, ref Reference) ([]string, error) {
	repo, err := c.repository(ref)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", ref.Repo(), err)
	}
	var out []string
	err = repo.Tags(ctx, "", func(tags []string) error {
		out = append(out, tags...)
		return nil
	})
	return out, classify("list tags of "+ref.Repo(), err)
}

// highestTag is the tag of the highest version that satisfies
// ref.Constraint ("" means any release), with semver's rule that a
// pre-release matches only a constraint that names one.
func (c *Client) highestTag(ctx context.Context, repo *remote.Repository, ref Reference) (string, error) {
	constraint := ref.Constraint
	if constraint == "" {
		constraint = "*"
	}
	con, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w: %v", ref, ErrNoMatchingVersion, err)
	}
	var tags []string
	if err := repo.Tags(ctx, "", func(ts []string) error {
		tags = append(tags, ts...)
		return nil
	}); err != nil {
		return "", classify("list tags of "+ref.Repo(), err)
	}
	type vt struct {
		tag string
		v   *semver.Version
	}
	var vs []vt
	for _, t := range tags {
		if v := VersionOf(t); v != nil {
			vs = append(vs, vt{t, v})
		}
	}
	sort.Slice(vs, func(i, j int) bool {
		if !vs[i].v.Equal(vs[j].v) {
			return vs[i].v.GreaterThan(vs[j].v)
		}
		return vs[i].tag < vs[j].tag
	})
	for _, x := range vs {
		if con.Check(x.v) {
			return x.tag, nil
		}
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("resolve %s: %w: the repository has no version tags (like 1.2.0); give a tag (oci://HOST/REPO:TAG) or a digest", ref, ErrNoMatchingVersion)
	}
	var avail []string
	for _, x := range vs {
		avail = append(avail, x.v.String())
	}
	if len(avail) > 20 {
		avail = append(avail[:20], "…")
	}
	return "", fmt.Errorf("resolve %s: %w: no tag matches %s; available versions: %s", ref, ErrNoMatchingVersion, constraint, strings.Join(avail, ", "))
}

// Pull fetches the artifact ref names (resolving a tag or constraint
// first) and checks every byte of it: the manifest against the digest,
// the config and each file against their descriptors, and the files
// against the config's h1: hash.
func (c *Client) Pull(ctx context.Context, ref Reference) (*Artifact, error) {
	ref, err := c.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	op := "pull " + ref.String()
	repo, err := c.repository(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	_, rc, err := repo.FetchReference(ctx, ref.Digest)
	if err != nil {
		return nil, classify(op, err)
	}
	raw, err := readLimited(rc, maxManifestBytes, "the manifest")
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := checkSum("the manifest", ref.Digest, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: the manifest is not JSON: %v", op, ErrNotSkill, err)
	}
	if m.ArtifactType != ArtifactType || m.Config.MediaType != ConfigMediaType {
		return nil, fmt.Errorf("%s: %w: its artifactType is %q and config type %q, a skill's are %s and %s (agent skill publish makes one)", op, ErrNotSkill, m.ArtifactType, m.Config.MediaType, ArtifactType, ConfigMediaType)
	}
	if m.Config.Size > maxConfigBytes {
		return nil, fmt.Errorf("%s: %w: config of %d bytes", op, ErrTooLarge, m.Config.Size)
	}
	cfgRaw, err := fetchBlob(ctx, repo, m.Config, "the config")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var cfg Config
	if err := json.Unmarshal(cfgRaw, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w: the config is not JSON: %v", op, ErrNotSkill, err)
	}
	if len(m.Layers) > maxFiles {
		return nil, fmt.Errorf("%s: %w: %d files", op, ErrTooLarge, len(m.Layers))
	}
	files := make([]File, len(m.Layers))
	seen := map[string]bool{}
	var total int64
	for i, l := range m.Layers {
		p := l.Annotations[AnnotationPath]
		switch {
		case l.MediaType != FileMediaType:
			return nil, fmt.Errorf("%s: %w: layer %d has type %q, not %s", op, ErrNotSkill, i, l.MediaType, FileMediaType)
		case !validPath(p):
			return nil, fmt.Errorf("%s: %w: layer %d names the path %q, which is not inside the skill folder", op, ErrNotSkill, i, p)
		case seen[p]:
			return nil, fmt.Errorf("%s: %w: the path %q appears twice", op, ErrNotSkill, p)
		case l.Digest.Algorithm() != "sha256" || l.Digest.Validate() != nil:
			return nil, fmt.Errorf("%s: %w: layer %s has digest %q; only sha256 is accepted", op, ErrNotSkill, p, l.Digest)
		case l.Size < 0:
			return nil, fmt.Errorf("%s: %w: layer %s has a negative size", op, ErrNotSkill, p)
		}
		seen[p] = true
		total += l.Size
		if total > MaxArtifactBytes {
			return nil, fmt.Errorf("%s: %w: the files add up to more than %d bytes", op, ErrTooLarge, MaxArtifactBytes)
		}
		files[i] = File{Path: p, Executable: l.Annotations[AnnotationExecutable] == "true", Digest: l.Digest.String()}
	}
	// Several files with one content are fetched once.
	byDigest := map[string][]int{}
	for i, f := range files {
		byDigest[f.Digest] = append(byDigest[f.Digest], i)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.concurrency())
	for _, idx := range byDigest {
		l := m.Layers[idx[0]]
		g.Go(func() error {
			b, err := fetchBlob(gctx, repo, l, files[idx[0]].Path)
			if err != nil {
				return err
			}
			for _, i := range idx {
				files[i].Data = b
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, classify(op, err)
	}
	sums := make(map[string]string, len(files))
	for _, f := range files {
		sums[f.Path] = strings.TrimPrefix(f.Digest, "sha256:")
	}
	h1, err := H1(sums)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", op, ErrNotSkill, err)
	}
	if h1 != cfg.H1 {
		return nil, fmt.Errorf("%s: %w: the config says the files hash to %s, they hash to %s", op, ErrDigestMismatch, cfg.H1, h1)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return &Artifact{Ref: ref, Config: cfg, Files: files, Manifest: raw, Annotations: m.Annotations}, nil
}

// fetchBlob reads one blob and checks its size and sha256 itself.
func fetchBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, what string) ([]byte, error) {
	rc, err := repo.Blobs().Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetch %s (%s): %w", what, desc.Digest, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, desc.Size+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s (%s): %w", what, desc.Digest, err)
	}
	if int64(len(b)) != desc.Size {
		return nil, fmt.Errorf("%w: %s: expected %d bytes with %s, got %d bytes with sha256:%s", ErrDigestMismatch, what, desc.Size, desc.Digest, len(b), sum(b))
	}
	return b, checkSum(what, desc.Digest.String(), b)
}

func checkSum(what, want string, b []byte) error {
	if got := "sha256:" + sum(b); got != want {
		return fmt.Errorf("%w: %s: expected %s, got %s; the registry's copy was changed or damaged: publish it again, or ask its owner", ErrDigestMismatch, what, want, got)
	}
	return nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FS is the artifact's files as a read-only file system, under the
// folder prefix ("" is the root). The files are already in memory;
// testing/fstest's MapFS is the standard library's map-backed fs.FS.
func (a *Artifact) FS(prefix string) fs.FS {
	m := make(fstest.MapFS, len(a.Files))
	for _, f := range a.Files {
		mode := fs.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		m[path.Join(prefix, f.Path)] = &fstest.MapFile{Data: f.Data, Mode: mode}
	}
	return m
}
