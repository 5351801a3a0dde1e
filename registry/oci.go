package registry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentskills/agent/registry/gitsrc"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/signing"
	"github.com/agentskills/agent/registry/wellknown"
)

// SourceOCI marks an entry installed from an OCI registry (SPEC §18): its
// URL is oci://HOST/REPO and its CommitSHA the manifest digest
// (sha256:<hex>), which is also what a lock records as its commit.
const SourceOCI = "oci"

// fetched reports whether e came from a source that can be fetched again
// (git or OCI): what lock, sync, update and rollback work on.
func (e Entry) fetched() bool {
	return e.Source == SourceGit || e.Source == SourceOCI || e.Source == SourceWellKnown
}

// sourceKind is the Entry.Source of a fetched URL.
func sourceKind(u string) string { return entrySource(gitsrc.Recorded(u).Kind) }

// entrySource is the Entry.Source of a source of kind k.
func entrySource(k gitsrc.Kind) string {
	switch k {
	case gitsrc.KindOCI:
		return SourceOCI
	case gitsrc.KindWellKnown:
		return SourceWellKnown
	}
	return SourceGit
}

// isOCI reports whether req fetches from an OCI registry: its parsed kind,
// or, for a request nobody parsed, its URL's scheme.
func isOCI(req gitsrc.FetchRequest) bool {
	return req.Kind == gitsrc.KindOCI || req.Kind == 0 && ocisrc.IsOCI(req.URL)
}

// ociReference is the reference a FetchRequest for an oci:// URL names:
// the repository its Source parsed (req.OCI), with the ref or constraint.
// Only a request built without a Source has its URL parsed here.
func ociReference(req gitsrc.FetchRequest) (ocisrc.Reference, error) {
	ref := req.OCI
	if ref.Host == "" {
		var err error
		if ref, err = ocisrc.Parse(req.URL); err != nil {
			return ref, fmt.Errorf("fetch %s: %w: %v", req.URL, gitsrc.ErrUnsupportedSource, err)
		}
	}
	if ref.Tag != "" || ref.Digest != "" || ref.Constraint != "" {
		return ref, fmt.Errorf("fetch %s: %w: the source URL holds a tag or digest; give it as the ref", req.URL, gitsrc.ErrUnsupportedSource)
	}
	switch {
	case req.Constraint != "":
		ref.Constraint = req.Constraint
	case strings.HasPrefix(req.Ref, "sha256:"):
		ref.Digest = req.Ref
	default:
		ref.Tag = ocisrc.TagFor(req.Ref)
	}
	if _, err := ocisrc.Parse(ref.String()); err != nil {
		return ref, fmt.Errorf("fetch %s: %w: %v", req.URL, gitsrc.ErrUnsupportedSource, err)
	}
	return ref, nil
}

// The source family, as a chain of fetchers: every fetch of the store
// (add, update, sync, rollback, survey) goes through one gitsrc.Git built
// by newSources,
//
//	verified{mirrored{byKind{git, oci}}}
//
// where byKind dispatches on the source's parsed kind (git or OCI),
// mirrored serves pinned git fetches a mirror covers from its OCI
// registry, and verified checks what came back against the signer policy
// (signature.go). A new kind of source is one more fetcher in byKind.

// fetcher is one way to fetch a source: it returns the snapshot and, when
// it came from an OCI registry (a source or a mirror), the artifact it was
// read from, which the signature check reads.
type fetcher interface {
	fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error)
}

// newSources is the chain of fetchers for a store's settings.
func newSources(g gitsrc.Git, oci *ocisrc.Client, mirrors []Mirror, policy *signing.Policy) verified {
	if g == nil {
		g = &gitsrc.GoGit{}
	}
	if oci == nil {
		oci = &ocisrc.Client{}
	}
	kinds := byKind{git: gitFetcher{g}, oci: ociFetcher{oci}}
	return verified{next: mirrored{next: kinds, mirrors: mirrors, oci: oci}, policy: policy, oci: oci}
}

// verified is the outer fetcher: it checks what the inner ones fetched
// against the signer policy (verifySnapshot), and is the gitsrc.Git the
// store fetches through.
type verified struct {
	next   fetcher
	policy *signing.Policy
	oci    *ocisrc.Client // reads an artifact's signature referrers
}

// Fetch fetches req and checks it against the signer policy
// (verifySnapshot).
func (s verified) Fetch(ctx context.Context, req gitsrc.FetchRequest) (snap *gitsrc.Snapshot, err error) {
	ctx, span := startFetchSpan(ctx, req.URL, req.Ref)
	defer func() { endFetchSpan(span, snap, err) }()
	snap, a, err := s.next.fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := s.verifySnapshot(ctx, req.URL, snap, a); err != nil {
		return nil, err
	}
	return snap, nil
}

// mirrored serves a pinned fetch (a full commit SHA, no constraint) of a
// git source that a mirror covers from the mirror; everything else goes
// on to next.
type mirrored struct {
	next    fetcher
	mirrors []Mirror
	oci     *ocisrc.Client
}

func (s mirrored) fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error) {
	if !isOCI(req) && !isWellKnown(req) {
		if m, ok := mirrorFor(s.mirrors, req.URL); ok && req.Constraint == "" && len(req.Ref) == 40 && gitsrc.IsHex(req.Ref) {
			return s.fetchMirror(ctx, m, req)
		}
	}
	return s.next.fetch(ctx, req)
}

// isWellKnown: a source read from a site's well-known skills index.
func isWellKnown(req gitsrc.FetchRequest) bool {
	return req.Kind == gitsrc.KindWellKnown || req.Kind == 0 && gitsrc.IsWellKnownIndex(req.URL)
}

// byKind dispatches on the source's kind: oci:// sources from their
// registry, well-known indexes from their site, git sources from git.
type byKind struct {
	git, oci fetcher
}

func (s byKind) fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error) {
	if isOCI(req) {
		return s.oci.fetch(ctx, req)
	}
	if isWellKnown(req) {
		snap, err := (&wellknown.Fetcher{}).Fetch(ctx, req)
		return snap, nil, err
	}
	return s.git.fetch(ctx, req)
}

// gitFetcher fetches a git source through a gitsrc.Git.
type gitFetcher struct{ git gitsrc.Git }

func (s gitFetcher) fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error) {
	snap, err := s.git.Fetch(ctx, req)
	return snap, nil, err
}

// ociFetcher pulls an oci:// source from its registry.
type ociFetcher struct{ oci *ocisrc.Client }

func (s ociFetcher) fetch(ctx context.Context, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error) {
	ref, err := ociReference(req)
	if err != nil {
		return nil, nil, err
	}
	if req.Progress != nil {
		fmt.Fprintf(req.Progress, "Pulling %s\n", ref)
	}
	a, err := s.oci.Pull(ctx, ref)
	if err != nil {
		return nil, nil, ociError(err)
	}
	snap := &gitsrc.Snapshot{Commit: a.Ref.Digest, Kind: "commit", Ref: a.Ref.Digest, FS: a.FS("")}
	if ref.Digest == "" {
		snap.Kind, snap.Ref = "tag", a.Ref.Tag
	}
	if v := ocisrc.VersionOf(a.Ref.Tag); v != nil {
		snap.Version = v.String()
	} else if a.Config.Version != "" {
		snap.Version = a.Config.Version
	}
	return snap, a, nil
}

// ociError maps ocisrc's sentinels to the registry's, keeping the text
// (a digest mismatch stays ocisrc.ErrDigestMismatch: it names both sums).
func ociError(err error) error {
	switch {
	case errors.Is(err, ocisrc.ErrNoMatchingVersion):
		return fmt.Errorf("%w: %v", gitsrc.ErrNoMatchingVersion, err)
	case errors.Is(err, ocisrc.ErrNotFound):
		return fmt.Errorf("%w: %v", gitsrc.ErrRefNotFound, err)
	}
	return err
}

// Mirror maps git sources to an OCI prefix (config mirrors:, or
// --mirror for every source): a pinned fetch (sync, rollback) of a
// covered source pulls the skill folder that `agent skill mirror` pushed
// there instead of reaching the git host. The h1: check is the same.
type Mirror struct {
	// Source is a prefix of the git URLs the mirror covers; "" covers all.
	Source string `mapstructure:"source" json:"source,omitempty"`
	// OCI is oci://HOST/PREFIX.
	OCI string `mapstructure:"oci" json:"oci"`
}

// Check validates a mirror's fields.
func (m Mirror) Check() error {
	ref, err := ocisrc.Parse(m.OCI)
	if err != nil {
		return fmt.Errorf("mirror %q: %w", m.OCI, err)
	}
	if ref.Tag != "" || ref.Digest != "" || ref.Constraint != "" {
		return fmt.Errorf("mirror %q: give oci://HOST/PREFIX, without a tag or digest", m.OCI)
	}
	return nil
}

func mirrorFor(ms []Mirror, gitURL string) (Mirror, bool) {
	best, found := Mirror{}, false
	for _, m := range ms {
		if strings.HasPrefix(gitURL, m.Source) && (!found || len(m.Source) > len(best.Source)) {
			best, found = m, true
		}
	}
	return best, found
}

var repoPartRE = lazyregexp.New(`[^a-z0-9]+`)

// MirrorRef is where a mirror under prefix (oci://HOST/PREFIX) keeps the
// skill at folder path of git source src at commit: the repository
// PREFIX/<host and path of src>/<path>, with each segment lower-cased and
// anything but letters and digits made '-', tagged with the commit SHA.
// Two sources that map to one name are told apart by the artifact's
// recorded origin, which the fetch checks.
func MirrorRef(prefix, src, path, commit string) (ocisrc.Reference, error) {
	ref, err := ocisrc.Parse(prefix)
	if err != nil {
		return ref, err
	}
	var parts []string
	if ref.Repository != "" {
		parts = append(parts, ref.Repository)
	}
	for _, seg := range strings.Split(sourcePath(src)+"/"+path, "/") {
		seg = strings.Trim(repoPartRE.ReplaceAllString(strings.ToLower(seg), "-"), "-")
		if seg != "" {
			parts = append(parts, seg)
		}
	}
	ref.Repository = strings.Join(parts, "/")
	ref.Tag = commit
	if _, err := ocisrc.Parse(ref.String()); err != nil {
		return ref, fmt.Errorf("mirror name for %s (%s): %w", src, path, err)
	}
	return ref, nil
}

// sourcePath is a git URL's host and path, without scheme, user or .git.
func sourcePath(src string) string {
	if u, err := url.Parse(src); err == nil && u.Host != "" {
		return u.Host + "/" + strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	}
	s := src
	if at := strings.Index(s, "@"); at >= 0 && !strings.Contains(s[:at], "/") {
		s = s[at+1:]
	}
	return strings.TrimSuffix(strings.ReplaceAll(s, ":", "/"), ".git")
}

func (s mirrored) fetchMirror(ctx context.Context, m Mirror, req gitsrc.FetchRequest) (*gitsrc.Snapshot, *ocisrc.Artifact, error) {
	ref, err := MirrorRef(m.OCI, req.URL, req.Path, req.Ref)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s from the mirror %s: %w", req.URL, m.OCI, err)
	}
	if req.Progress != nil {
		fmt.Fprintf(req.Progress, "Pulling %s (mirror of %s)\n", ref, req.URL)
	}
	a, err := s.oci.Pull(ctx, ref)
	if errors.Is(err, ocisrc.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w: %s at %s (%q) is not in the mirror %s (looked for %s); fill it with agent skill mirror skills.lock %s", gitsrc.ErrRefNotFound, req.URL, gitsrc.Short(req.Ref), req.Path, m.OCI, ref, m.OCI)
	}
	if err != nil {
		return nil, nil, ociError(err)
	}
	if o := a.Config.Origin; o == nil || o.Source != req.URL || o.Path != req.Path || o.Commit != req.Ref {
		return nil, nil, fmt.Errorf("%w: %s in the mirror holds %+v, not %s at %s (%q); refill the mirror with agent skill mirror", ErrCommitMismatch, ref, a.Config.Origin, req.URL, gitsrc.Short(req.Ref), req.Path)
	}
	return &gitsrc.Snapshot{Commit: req.Ref, Kind: "commit", Ref: req.Ref, FS: a.FS(req.Path)}, a, nil
}
