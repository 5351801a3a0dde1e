package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/ocisrc"
)

// Surveyor reads what a source holds (registry.Store).
type Surveyor interface {
	Survey(ctx context.Context, src gitsrc.Source, progress io.Writer, known func(commit string) bool, look func(f gitsrc.Found, fsys fs.FS)) (*registry.Survey, error)
}

// Registries lists an OCI registry's repositories and tags
// (ocisrc.Client).
type Registries interface {
	Repositories(ctx context.Context, host, prefix string) ([]string, error)
	Tags(ctx context.Context, ref ocisrc.Reference) ([]string, error)
	Resolve(ctx context.Context, ref ocisrc.Reference) (ocisrc.Reference, error)
}

// Collector gathers the skills of configured sources.
type Collector struct {
	Store Surveyor
	OCI   Registries
	// CacheDir keeps each source's skills by commit (or digest), so that
	// an unchanged source is not surveyed again; "" keeps nothing.
	CacheDir string
	Progress io.Writer // nil is silent
	// Audit, when not nil, reads a surveyed skill's files (agent skill
	// audit's rules) and returns the summary a hit shows (Skill.Audit).
	Audit func(fsys fs.FS, m *manifest.Manifest) string
	// AuditRules names the rules Audit applies (pack and digest): a
	// source surveyed under other rules is audited again.
	AuditRules string
}

// Source collects the skills of one configured source: a git source as
// add takes it, oci://HOST/REPO[:TAG] (one repository), or oci://HOST and
// oci://HOST/PREFIX (every repository of the registry under PREFIX, from
// its catalog).
func (c *Collector) Source(ctx context.Context, raw string) ([]Skill, error) {
	if ocisrc.IsOCI(raw) {
		return c.oci(ctx, raw)
	}
	src, err := gitsrc.ParseSource(raw)
	if err != nil {
		return nil, err
	}
	return c.survey(ctx, src, KindGit, nil)
}

// Sources collects every source, going on past failures: each failure is
// returned beside what the others gave.
func (c *Collector) Sources(ctx context.Context, raws []string) ([]Skill, []error) {
	var out []Skill
	var errs []error
	for _, raw := range raws {
		s, err := c.Source(ctx, raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s...)
	}
	return out, errs
}

func (c *Collector) oci(ctx context.Context, raw string) ([]Skill, error) {
	host, rest, _ := strings.Cut(strings.TrimPrefix(raw, ocisrc.Scheme), "/")
	rest = strings.TrimSuffix(rest, "/")
	if ref, err := ocisrc.Parse(raw); err == nil && (ref.Tag != "" || ref.Digest != "" || ref.Constraint != "") {
		return c.ociRepo(ctx, ref)
	}
	repos, err := c.OCI.Repositories(ctx, host, rest)
	if err != nil {
		return nil, err
	}
	var out []Skill
	for _, r := range repos {
		if rest != "" && r != rest && !strings.HasPrefix(r, rest+"/") {
			continue
		}
		s, err := c.ociRepo(ctx, ocisrc.Reference{Host: host, Repository: r})
		if err != nil {
			// Another artifact (an image) in the same registry is no
			// failure of the catalog.
			c.progressf("skipped %s%s/%s: %v\n", ocisrc.Scheme, host, r, err)
			continue
		}
		out = append(out, s...)
	}
	return out, nil
}

// ociRepo surveys one repository at its highest version tag (or the tag
// or digest named), listing its versions.
func (c *Collector) ociRepo(ctx context.Context, ref ocisrc.Reference) ([]Skill, error) {
	tags, err := c.OCI.Tags(ctx, ref)
	if err != nil {
		return nil, err
	}
	var versions []string
	for _, t := range tags {
		if v := ocisrc.VersionOf(t); v != nil {
			versions = append(versions, v.String())
		}
	}
	sortVersions(versions)
	if ref.Tag == "" && ref.Digest == "" && len(versions) == 0 {
		if !slices.Contains(tags, "latest") {
			return nil, fmt.Errorf("%s has no version tag", ref.Repo())
		}
		ref.Tag = "latest"
	}
	resolved, err := c.OCI.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	source := ref.Repo()
	raw := resolved.Repo() + ":" + resolved.Tag
	if resolved.Tag == "" {
		raw = resolved.Repo() + "@" + resolved.Digest
	}
	src, err := gitsrc.ParseSource(raw)
	if err != nil {
		return nil, err
	}
	skills, err := c.survey(ctx, src, KindOCI, func(s *Skill) {
		s.Source, s.Versions = source, versions
		s.ID = raw
	})
	return skills, err
}

// cached is one source's skills at one commit.
type cached struct {
	Commit     string  `json:"commit"`
	AuditRules string  `json:"audit_rules,omitempty"`
	Skills     []Skill `json:"skills"`
	// Manifests are the SKILL.md texts by skill ID (Skill.Manifest is
	// not in its JSON).
	Manifests map[string]string `json:"manifests,omitempty"`
}

func (c *Collector) cachePath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.CacheDir, hex.EncodeToString(sum[:16])+".json")
}

func (c *Collector) readCache(key string) *cached {
	if c.CacheDir == "" {
		return nil
	}
	b, err := os.ReadFile(c.cachePath(key))
	if err != nil {
		return nil
	}
	var e cached
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	return &e
}

func (c *Collector) writeCache(key string, e *cached) {
	if c.CacheDir == "" {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	// A cache that cannot be written costs the next search a survey.
	if os.MkdirAll(c.CacheDir, 0o755) == nil {
		_ = atomicfile.Write(c.cachePath(key), b, 0o644)
	}
}

// survey reads src, or its cached skills when the commit is unchanged.
func (c *Collector) survey(ctx context.Context, src gitsrc.Source, kind string, adjust func(*Skill)) ([]Skill, error) {
	key := src.Raw
	prev := c.readCache(key)
	audits := map[string]string{}
	var look func(gitsrc.Found, fs.FS)
	if c.Audit != nil {
		look = func(f gitsrc.Found, fsys fs.FS) { audits[f.Dir] = c.Audit(fsys, f.Manifest) }
	}
	sv, err := c.Store.Survey(ctx, src, c.Progress, func(commit string) bool {
		return prev != nil && prev.Commit == commit && prev.AuditRules == c.AuditRules
	}, look)
	if err != nil {
		return nil, err
	}
	if sv.Skills == nil && prev != nil {
		out := slices.Clone(prev.Skills)
		for i := range out {
			// The signer policy may have changed since: the fetch just
			// checked it again.
			out[i].Signer, out[i].Signed = sv.Signer, sv.Signer != ""
			out[i].Manifest = prev.Manifests[out[i].ID]
		}
		return out, nil
	}
	var out []Skill
	e := &cached{Commit: sv.Commit, AuditRules: c.AuditRules, Manifests: map[string]string{}}
	for _, f := range sv.Skills {
		if f.Manifest == nil {
			continue
		}
		m := f.Manifest
		version := sv.Version
		if version == "" {
			version = m.Version
		}
		s := Skill{
			ID: ID(src.URL, f.Dir), Name: m.Name, Description: m.Description, Source: src.URL, Path: f.Dir,
			Kind: kind, Version: version, Pin: sv.Commit, Signer: sv.Signer, Signed: sv.Signer != "",
			Permissions: permissionsOf(m.Permissions), Manifest: sv.Manifests[f.Dir], Audit: audits[f.Dir],
		}
		if version != "" {
			s.Versions = []string{version}
		}
		if adjust != nil {
			adjust(&s)
		}
		out = append(out, s)
		e.Manifests[s.ID] = s.Manifest
	}
	e.Skills = out
	c.writeCache(key, e)
	return out, nil
}

func (c *Collector) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format, args...)
	}
}

// Installed lists installed (and bundled and discovered) skills from
// their registry entries: no SKILL.md is read. A skill that did not come
// from a source (bundled, discovered, linked) has its name as its ID and
// its kind of entry as its Kind;
// lastAudit, when not nil, is the summary of a skill's last audit by its
// canonical name ("" when none is recorded).
func Installed(entries []registry.Entry, lastAudit func(canonical string) string) []Skill {
	var out []Skill
	for _, e := range entries {
		s := Skill{
			Name: e.Name, Description: e.Description, Kind: KindInstalled, Installed: true,
			Source: e.URL, Path: e.Subdir, Version: e.Version, Pin: e.CommitSHA,
			Signer: e.Signer, Signed: e.Signer != "",
		}
		if lastAudit != nil {
			s.Audit = lastAudit(e.Canonical)
		}
		if l := e.Listing; l != nil {
			p := &l.Manifest.Permissions
			s.Permissions = Permissions{FSRead: p.FS.Read, FSWrite: p.FS.Write, Network: p.Network, Env: p.Env}
		}
		switch {
		case e.URL != "":
			s.ID = ID(e.URL, e.Subdir)
		default:
			s.ID, s.Source, s.Kind = e.Canonical, e.Source, e.Source
		}
		if s.Version != "" {
			s.Versions = []string{s.Version}
		}
		out = append(out, s)
	}
	return out
}

// sortVersions sorts semver strings highest first.
func sortVersions(vs []string) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := ocisrc.VersionOf(vs[i]), ocisrc.VersionOf(vs[j])
		if a == nil || b == nil {
			return vs[i] > vs[j]
		}
		return a.GreaterThan(b)
	})
}
