package provenance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/registry/ocisrc"
)

// PublishRequest is what `agent skill publish` asks for.
type PublishRequest struct {
	// Skill is an installed skill's name or a skill folder.
	Skill string
	// Ref is oci://HOST/REPO[:TAG]; without a tag, the manifest's version
	// (with '+' written '_') is the tag.
	Ref string
}

// Published is a pushed skill artifact.
type Published struct {
	Ref     ocisrc.Reference // with tag and digest
	Name    string
	Version string
	H1      string
}

// Publish pushes a skill folder (the files its h1: hash covers) as one
// OCI artifact. An installed skill is published only while its files
// match what was installed.
func (s *Publisher) Publish(ctx context.Context, req PublishRequest) (Published, error) {
	dir, err := s.publishDir(req.Skill)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", req.Skill, err)
	}
	m, _, err := gitsrc.LoadManifestAs(dir, "")
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", req.Skill, err)
	}
	ref, err := ocisrc.Parse(req.Ref)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w: %v", req.Skill, gitsrc.ErrUnsupportedSource, err)
	}
	if ref.Digest != "" || ref.Constraint != "" {
		return Published{}, fmt.Errorf("publish %s: %w: push to a tag (oci://HOST/REPO:TAG), not a digest or constraint", req.Skill, gitsrc.ErrUnsupportedSource)
	}
	if ref.Tag == "" {
		if m.Version == "" {
			return Published{}, fmt.Errorf("publish %s: %w: SKILL.md has no version to tag with; give one: %s:1.0.0", req.Skill, gitsrc.ErrUnsupportedSource, req.Ref)
		}
		ref.Tag = ocisrc.TagFor(m.Version)
	}
	// A skill's own git checkout is published without its .git folder:
	// what is pushed is a copy as an install would write it.
	tmp, err := os.MkdirTemp("", "agent-publish-")
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", req.Skill, err)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "skill")
	if err := gitsrc.WriteTree(os.DirFS(dir), ".", staged, s.Store.Limits); err != nil {
		return Published{}, fmt.Errorf("publish %s: copy %s: %w", req.Skill, dir, err)
	}
	dir = staged
	names, bad, err := registry.SkillFiles(dir)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", req.Skill, err)
	}
	if len(bad) > 0 {
		return Published{}, fmt.Errorf("publish %s: %w: %s is not a regular file; a skill holds only files and folders", req.Skill, registry.ErrLink, bad[0])
	}
	h1, _, err := registry.HashSkill(dir)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", req.Skill, err)
	}
	desc, err := s.ociClient().Push(ctx, ref, dir, names, ocisrc.Config{Name: m.Name, Version: m.Version, Description: m.Description, H1: h1})
	if err != nil {
		return Published{}, err
	}
	ref.Digest = desc.Digest.String()
	return Published{Ref: ref, Name: m.Name, Version: m.Version, H1: h1}, nil
}

// publishDir is the folder of a skill folder path or an installed name.
func (s *Publisher) publishDir(skill string) (string, error) {
	if fi, err := os.Stat(gitsrc.ManifestPath(skill)); err == nil && fi.Mode().IsRegular() {
		return filepath.Abs(skill)
	}
	e, err := s.Store.Get(skill)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			return "", fmt.Errorf("%w; give an installed skill's name or a folder holding %s", err, manifest.ManifestFile)
		}
		return "", err
	}
	if e.Source == registry.SourceBundled {
		return "", fmt.Errorf("%s is bundled with agent; publish a skill folder or an installed skill", e.Canonical)
	}
	if e.DirHash != "" {
		if err := s.Store.CheckIntegrity(e); err != nil {
			return "", err
		}
	}
	return e.Path, nil
}

func (s *Publisher) ociClient() *ocisrc.Client {
	if s.Store.OCI == nil {
		return &ocisrc.Client{}
	}
	return s.Store.OCI
}

// MirrorResult is one lock entry `agent skill mirror` handled.
type MirrorResult struct {
	Name    string
	Ref     ocisrc.Reference // where it went, with the digest; empty when skipped
	Skipped string           // why nothing was pushed
}

// FillMirror copies every git skill of l to the mirror under prefix
// (oci://HOST/PREFIX), where a sync with that mirror finds it
// (registry.MirrorRef). Each folder is fetched from git at the locked commit and
// refused unless it hashes to the locked h1:. Skills from OCI sources are
// left where they are. Errors for one skill do not stop the others.
func (s *Publisher) FillMirror(ctx context.Context, l *registry.Lock, prefix string, progress io.Writer) ([]MirrorResult, error) {
	if err := (registry.Mirror{OCI: prefix}).Check(); err != nil {
		return nil, err
	}
	var out []MirrorResult
	var errs []error
	for _, le := range l.Skills {
		if ocisrc.IsOCI(le.Source) {
			out = append(out, MirrorResult{Name: le.Name, Skipped: "already in an OCI registry (" + le.Source + ")"})
			continue
		}
		if gitsrc.IsWellKnownIndex(le.Source) {
			out = append(out, MirrorResult{Name: le.Name, Skipped: "from a well-known index, which a mirror does not cover (" + le.Source + ")"})
			continue
		}
		r, err := s.mirrorOne(ctx, le, prefix, progress)
		if err != nil {
			errs = append(errs, fmt.Errorf("mirror %s: %w", le.Name, err))
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func (s *Publisher) mirrorOne(ctx context.Context, le registry.LockEntry, prefix string, progress io.Writer) (MirrorResult, error) {
	ref, err := registry.MirrorRef(prefix, le.Source, le.Path, le.Commit)
	if err != nil {
		return MirrorResult{}, err
	}
	// From git itself, never from a mirror.
	g := s.Store.Git
	if g == nil {
		g = &gitsrc.GoGit{}
	}
	src := gitsrc.Recorded(le.Source)
	src.Ref = le.Commit
	req := registry.FetchRequest(s.Store, src, progress)
	snap, err := g.Fetch(ctx, req)
	if err != nil {
		return MirrorResult{}, err
	}
	if snap.Commit != le.Commit {
		return MirrorResult{}, fmt.Errorf("fetch %s at %s: %w: got commit %s instead", le.Source, gitsrc.Short(le.Commit), registry.ErrCommitMismatch, gitsrc.Short(snap.Commit))
	}
	tmp, err := os.MkdirTemp("", "agent-mirror-")
	if err != nil {
		return MirrorResult{}, err
	}
	defer os.RemoveAll(tmp)
	if err := gitsrc.CheckoutSkill(snap, le.Path, tmp, nil, s.Store.Limits); err != nil {
		return MirrorResult{}, fmt.Errorf("read %s at %s: %w", le.Source, gitsrc.Short(le.Commit), err)
	}
	dir := filepath.Join(tmp, filepath.FromSlash(le.Path))
	h1, _, err := registry.HashSkill(dir)
	if err != nil {
		return MirrorResult{}, err
	}
	if h1 != le.Hash {
		return MirrorResult{}, registry.HashMismatch(le, h1)
	}
	names, _, err := registry.SkillFiles(dir)
	if err != nil {
		return MirrorResult{}, err
	}
	cfg := ocisrc.Config{Name: le.Name, Version: le.Version, H1: h1, Origin: &ocisrc.Origin{Source: le.Source, Path: le.Path, Commit: le.Commit}}
	desc, err := s.ociClient().Push(ctx, ref, dir, names, cfg)
	if err != nil {
		return MirrorResult{}, err
	}
	ref.Digest = desc.Digest.String()
	return MirrorResult{Name: le.Name, Ref: ref}, nil
}
