package gitsrc

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/Masterminds/semver/v3"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/registry/ocisrc"
)

// Kind is the family a source belongs to, which decides what fetches it.
// ParseSource sets it once, so that no later step tests the URL again.
type Kind uint8

// Kinds of Source. The zero Kind is a source nobody parsed (a hand-built
// FetchRequest); fetchers then classify its URL themselves.
const (
	KindGit Kind = iota + 1 // a git URL, owner/repo or a local repository
	KindOCI                 // oci://HOST/REPO (SPEC §18)
)

// Source is where a skill comes from (SPEC §6 <source>).
type Source struct {
	Raw  string // what the user typed
	Kind Kind
	URL  string // what is fetched: a URL (oci://HOST/REPO for KindOCI), or an absolute local path
	// OCI is URL parsed, for KindOCI: the repository, without tag, digest
	// or constraint (those are Ref and Constraint).
	OCI        ocisrc.Reference
	Ref        string // branch, tag or SHA from source@X, if X is not a constraint
	Constraint string // semver constraint from source@X
	// Skill is the folder a GitHub web address points into
	// (.../tree/REF/PATH or .../blob/REF/PATH/SKILL.md); "" otherwise.
	Skill string
}

func (s Source) String() string { return s.Raw }

// Request is the FetchRequest for s: the typed source travels with it, so
// the fetch does not parse the URL again.
func (s Source) Request() FetchRequest {
	return FetchRequest{URL: s.URL, Ref: s.Ref, Constraint: s.Constraint, Kind: s.Kind, OCI: s.OCI}
}

// Recorded is the source a registry entry or a lock recorded: url as it
// was written, of the kind its scheme says. An oci:// URL that does not
// parse keeps KindOCI and a zero OCI; fetching it reports why.
func Recorded(url string) Source {
	if IsWellKnownIndex(url) {
		return Source{Raw: url, Kind: KindWellKnown, URL: url}
	}
	if !ocisrc.IsOCI(url) {
		return Source{Raw: url, Kind: KindGit, URL: url}
	}
	ref, _ := ocisrc.Parse(url)
	return Source{Raw: url, Kind: KindOCI, URL: url, OCI: ref}
}

var (
	transportRE   = lazyregexp.New(`^[A-Za-z][A-Za-z0-9+.-]*::`)
	schemeRE      = lazyregexp.New(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	scpRE         = lazyregexp.New(`^(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:[^/\\]`)
	ownerRepoRE   = lazyregexp.New(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	shaRE         = lazyregexp.New(`^[0-9a-fA-F]{7,40}$`)
	fullVersionRE = lazyregexp.New(`^v?\d+\.\d+\.\d+([-+].*)?$`)
	shortNumRE    = lazyregexp.New(`^\d{1,6}$`)
	partialVerRE  = lazyregexp.New(`^v?\d+(\.(\d+|[xX*]))*(\.(\d+|[xX*]))?$`)
	githubWebRE   = lazyregexp.New(`^https?://(?:www\.)?github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/(tree|blob)/([^/?#]+)(?:/([^?#]*))?(?:[?#].*)?$`)
)

// allowedSchemes are the URL schemes go-git is allowed to use. Anything else,
// in particular ext:: and other "transport::" helpers that run commands, is
// refused.
var allowedSchemes = map[string]bool{"https": true, "http": true, "ssh": true, "git": true, "file": true}

// ParseSource parses the <source> argument of `agent skill add`.
func ParseSource(s string) (Source, error) {
	src := Source{Raw: s, Kind: KindGit}
	s = strings.TrimSpace(s)
	if s == "" {
		return src, fmt.Errorf("%w: the source is empty; give a git URL, a local path or owner/repo", ErrUnsupportedSource)
	}
	if strings.ContainsAny(s, "\x00\n\r") {
		return src, fmt.Errorf("%w %q: it contains control characters", ErrUnsupportedSource, s)
	}
	if transportRE.MatchString(s) {
		return src, fmt.Errorf("%w %q: git remote helpers (transport::address, such as ext::) can run commands and are refused; use an https, ssh, git or file URL", ErrUnsupportedSource, s)
	}
	if ocisrc.IsOCI(s) {
		return ociSource(s)
	}
	if IsWellKnownIndex(s) {
		return Source{Raw: s, Kind: KindWellKnown, URL: s}, nil
	}
	// A local path that exists is taken whole, even if it contains '@'.
	if !schemeRE.MatchString(s) {
		if p, ok := existingPath(s); ok {
			src.URL = p
			return src, nil
		}
	}
	if m := githubWebRE.FindStringSubmatch(s); m != nil {
		return githubWeb(src, m)
	}
	base, x := splitVersion(s)
	if x != "" {
		if isConstraint(x) {
			if _, err := semver.NewConstraint(x); err != nil {
				return src, fmt.Errorf("%w %q: %q is not a valid version constraint: %v", ErrUnsupportedSource, s, x, err)
			}
			src.Constraint = x
		} else {
			src.Ref = x
		}
	}
	u, err := sourceURL(base)
	if err != nil {
		return src, err
	}
	src.URL = u
	return src, nil
}

// githubWeb reads https://github.com/o/r/tree/REF/PATH and
// .../blob/REF/PATH/SKILL.md as source o/r, ref REF, skill PATH. A REF with
// a slash in it cannot be told from the path without asking GitHub, so
// REF is the first segment; use --ref with owner/repo for such a branch.
func githubWeb(src Source, m []string) (Source, error) {
	owner, repo, kind := m[1], strings.TrimSuffix(m[2], ".git"), m[3]
	ref, err := url.PathUnescape(m[4])
	if err != nil {
		return src, fmt.Errorf("%w %q: %v", ErrUnsupportedSource, src.Raw, err)
	}
	rel, err := url.PathUnescape(strings.Trim(m[5], "/"))
	if err != nil {
		return src, fmt.Errorf("%w %q: %v", ErrUnsupportedSource, src.Raw, err)
	}
	if kind == "blob" {
		if !manifest.IsName(path.Base(rel)) {
			return src, fmt.Errorf("%w %q: a blob/ address must point at a SKILL.md (or skill.md); use the tree/ address of the skill's folder", ErrUnsupportedSource, src.Raw)
		}
		rel = path.Dir(rel)
	}
	if rel == "." {
		rel = ""
	}
	if rel != "" && !manifest.InsideRel(rel) {
		return src, fmt.Errorf("%w %q: the path leaves the repository", ErrUnsupportedSource, src.Raw)
	}
	if owner == "." || owner == ".." || repo == "" || repo == "." || repo == ".." {
		return src, fmt.Errorf("%w %q: not a GitHub repository address", ErrUnsupportedSource, src.Raw)
	}
	src.URL = "https://github.com/" + owner + "/" + repo + ".git"
	src.Ref = ref
	src.Skill = rel
	return src, nil
}

func sourceURL(s string) (string, error) {
	if m := schemeRE.FindStringSubmatch(s); m != nil {
		scheme := strings.ToLower(m[1])
		if !allowedSchemes[scheme] {
			return "", fmt.Errorf("%w %q: scheme %q is not supported; use https, http, ssh, git or file", ErrUnsupportedSource, s, scheme)
		}
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrUnsupportedSource, s, err)
		}
		if scheme != "file" && u.Host == "" {
			return "", fmt.Errorf("%w %q: the URL has no host", ErrUnsupportedSource, s)
		}
		if scheme == "file" && u.Path == "" {
			return "", fmt.Errorf("%w %q: the file URL has no path", ErrUnsupportedSource, s)
		}
		return s, nil
	}
	if isLocalSyntax(s) {
		p, err := filepath.Abs(expandHome(s))
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrUnsupportedSource, s, err)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: local path %s does not exist; check the path", ErrRepoNotFound, p)
		}
		return p, nil
	}
	if ownerRepoRE.MatchString(s) && !strings.HasPrefix(s, ".") {
		owner, repo, _ := strings.Cut(s, "/")
		repo = strings.TrimSuffix(repo, ".git")
		if repo == "" || repo == "." || repo == ".." || owner == ".." {
			return "", fmt.Errorf("%w %q: not owner/repo", ErrUnsupportedSource, s)
		}
		return "https://github.com/" + owner + "/" + repo + ".git", nil
	}
	if scpRE.MatchString(s) {
		return s, nil
	}
	return "", fmt.Errorf("%w %q: give an https, http, ssh, git or file URL, git@host:owner/repo, a local path, or owner/repo for GitHub", ErrUnsupportedSource, s)
}

// splitVersion splits "source@X". The '@' of user@host or a path never
// counts: X may not contain '/' or ':'.
func splitVersion(s string) (string, string) {
	i := strings.LastIndex(s, "@")
	if i <= 0 || i == len(s)-1 {
		return s, ""
	}
	x := s[i+1:]
	if strings.ContainsAny(x, `/\:`) {
		return s, ""
	}
	return s[:i], x
}

// isConstraint decides whether X in source@X is a version constraint rather
// than a ref. Full versions (v1.2.0) and SHAs are refs: they name one tag or
// commit, which is what a user typing them means.
func isConstraint(x string) bool {
	if shaRE.MatchString(x) && !shortNumRE.MatchString(x) {
		return false
	}
	if fullVersionRE.MatchString(x) {
		return false
	}
	if strings.ContainsAny(x, "^~<>=*, |") {
		return true
	}
	_, err := semver.NewConstraint(x)
	return err == nil && partialVerRE.MatchString(x)
}

func isLocalSyntax(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") ||
		strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/") || s == "~"
}

func expandHome(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(s, "~"))
		}
	}
	return s
}

// existingPath returns the absolute form of s if it names something on disk.
// owner/repo that happens to exist as a relative directory is taken as local,
// as git itself does.
func existingPath(s string) (string, bool) {
	p := expandHome(s)
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	return abs, true
}

// ociSource reads oci://HOST/REPO[:TAG|@sha256:…|@CONSTRAINT] as a Source:
// URL oci://HOST/REPO, Ref the digest (when given) or the tag, Constraint
// the constraint.
func ociSource(raw string) (Source, error) {
	ref, err := ocisrc.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Source{Raw: raw}, fmt.Errorf("%w: %v", ErrUnsupportedSource, err)
	}
	src := Source{Raw: raw, Kind: KindOCI, URL: ref.Repo(), Constraint: ref.Constraint, Ref: ref.Tag}
	if ref.Digest != "" {
		src.Ref = ref.Digest
	}
	src.OCI = ocisrc.Reference{Host: ref.Host, Repository: ref.Repository}
	return src, nil
}
