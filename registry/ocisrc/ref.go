package ocisrc

import (
	"fmt"
	"net"
	"strings"

	"github.com/Masterminds/semver/v3"
	"oras.land/oras-go/v2/registry"
)

// Scheme prefixes every OCI source.
const Scheme = "oci://"

// Reference is a parsed oci://HOST/REPO[:TAG|@sha256:HEX|@CONSTRAINT].
type Reference struct {
	Host       string // registry host[:port]
	Repository string // the repository path, lower case
	Tag        string // "" unless a tag was given
	Digest     string // "sha256:<hex>", "" unless a digest was given
	Constraint string // a semver constraint over the tags, from @X
}

// IsOCI reports whether a source is an oci:// address.
func IsOCI(source string) bool { return strings.HasPrefix(source, Scheme) }

// Parse reads an oci:// address. oci://HOST/REPO@X is a digest when X is
// sha256:…, else a semver constraint over the repository's tags.
func Parse(s string) (Reference, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Reference{}, fmt.Errorf("%w %q: it must start with %s", ErrReference, s, Scheme)
	}
	var constraint string
	if i := strings.LastIndex(rest, "@"); i >= 0 && !strings.ContainsAny(rest[i+1:], ":/") {
		constraint = rest[i+1:]
		rest = rest[:i]
		if _, err := semver.NewConstraint(constraint); err != nil {
			return Reference{}, fmt.Errorf("%w %q: %q after @ is neither a digest (sha256:…) nor a version constraint: %v", ErrReference, s, constraint, err)
		}
	}
	rest = plusToUnderscore(rest)
	r, err := registry.ParseReference(rest)
	if err != nil {
		return Reference{}, fmt.Errorf("%w %q: %v; write oci://HOST/REPO:TAG or oci://HOST/REPO@sha256:HEX", ErrReference, s, err)
	}
	ref := Reference{Host: r.Registry, Repository: r.Repository, Constraint: constraint}
	if r.Reference != "" {
		if strings.Contains(r.Reference, ":") {
			if !strings.HasPrefix(r.Reference, "sha256:") {
				return Reference{}, fmt.Errorf("%w %q: only sha256 digests are accepted", ErrReference, s)
			}
			ref.Digest = r.Reference
			// oci://h/r:tag@sha256:… keeps the tag for the record; the
			// digest decides.
			if at := strings.LastIndex(rest, "@"); at >= 0 {
				if c := strings.LastIndex(rest[:at], ":"); c > strings.LastIndex(rest[:at], "/") {
					ref.Tag = rest[c+1 : at]
				}
			}
		} else {
			ref.Tag = r.Reference
		}
	}
	if constraint != "" && (ref.Tag != "" || ref.Digest != "") {
		return Reference{}, fmt.Errorf("%w %q: give a tag, a digest or a constraint, not two", ErrReference, s)
	}
	return ref, nil
}

// Repo is oci://HOST/REPO, without tag or digest: what a registry entry
// and a lock record as the source.
func (r Reference) Repo() string { return Scheme + r.Host + "/" + r.Repository }

// String is the reference as oci://…, with the tag and digest it has.
func (r Reference) String() string {
	s := r.Repo()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	if r.Constraint != "" {
		s += "@" + r.Constraint
	}
	return s
}

// Loopback reports whether host (host[:port]) is this machine: the only
// registries spoken to over plain HTTP.
func Loopback(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// TagFor is the OCI tag of a version: '+' (semver build metadata), which
// tags cannot hold, becomes '_'.
func TagFor(version string) string { return strings.ReplaceAll(version, "+", "_") }

// VersionOf reads a tag as a semver version, mapping '_' back to '+'; nil
// when the tag is not a version.
func VersionOf(tag string) *semver.Version {
	v, err := semver.NewVersion(strings.ReplaceAll(tag, "_", "+"))
	if err != nil {
		return nil
	}
	return v
}

// plusToUnderscore writes the '+' of a tag (semver build metadata, which
// tags cannot hold) as '_', as TagFor does.
func plusToUnderscore(s string) string {
	if strings.Contains(s, "@") {
		return s
	}
	slash := strings.LastIndex(s, "/")
	if colon := strings.LastIndex(s, ":"); colon > slash && slash >= 0 {
		return s[:colon] + TagFor(s[colon:])
	}
	return s
}
