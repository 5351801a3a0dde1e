package manifest

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
)

// ErrInvalidRequires is wrapped by ParseRequires for an agent.requires
// value that does not parse.
var ErrInvalidRequires = errors.New("invalid agent.requires")

// Requirement is one entry of agent.requires (SPEC §21): a skill this one
// needs, in the add source syntax, with the versions it accepts.
type Requirement struct {
	// Source is where the skill comes from, as `add` takes it: owner/repo,
	// a git URL, oci://HOST/REPO or a local path.
	Source string `json:"source"`
	// Path is the skill's folder inside Source ("" means discovery picks
	// the one skill there).
	Path string `json:"path,omitempty"`
	// Constraint is a semver constraint; "*" accepts any version.
	Constraint string `json:"constraint"`
}

func (r Requirement) String() string {
	s := r.Source
	if r.Path != "" {
		s += "//" + r.Path
	}
	return s + "@" + r.Constraint
}

// ParseRequires parses an agent.requires value: comma-separated
// `<source>[//<skill path>]@<constraint>` entries. It does no I/O: whether
// a source exists is for the resolver to find out. An empty value is no
// requirement.
func ParseRequires(s string) ([]Requirement, error) {
	var out []Requirement
	seen := map[string]bool{}
	for i, raw := range strings.Split(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			if strings.TrimSpace(s) == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: entry %d is empty; separate entries with one comma, as in 'owner/repo//skills/a@^1, owner/repo//skills/b@^2'", ErrInvalidRequires, i+1)
		}
		r, err := parseRequirement(e)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d %q: %v", ErrInvalidRequires, i+1, e, err)
		}
		key := r.Source + "//" + r.Path
		if seen[key] {
			return nil, fmt.Errorf("%w: entry %d %q names the same skill as an earlier entry; keep one and combine the constraints with a space, as in '>=1.2 <2'", ErrInvalidRequires, i+1, e)
		}
		seen[key] = true
		out = append(out, r)
	}
	return out, nil
}

func parseRequirement(e string) (Requirement, error) {
	var r Requirement
	if strings.ContainsFunc(e, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return r, errors.New("it contains control characters")
	}
	at := strings.LastIndex(e, "@")
	if at < 0 {
		return r, errors.New("it has no @constraint; end it with the versions it accepts, such as @^1.2, or @* for any")
	}
	loc, c := strings.TrimSpace(e[:at]), strings.TrimSpace(e[at+1:])
	if c == "" {
		return r, errors.New("the constraint after @ is empty; write one such as ^1.2, or * for any version")
	}
	if strings.ContainsAny(c, "/@") {
		return r, fmt.Errorf("%q is not a version constraint; the constraint comes last, after the skill path (source//path@^1)", c)
	}
	if _, err := semver.NewConstraint(c); err != nil {
		return r, fmt.Errorf("%q is not a semver constraint (%v); write one such as ^1.2, ~2.0 or '>=1 <3' (commas separate entries, so AND is a space)", c, err)
	}
	r.Constraint = c
	// The skill path follows the first "//" after the scheme's "://".
	rest := 0
	if i := strings.Index(loc, "://"); i >= 0 {
		rest = i + 3
	}
	if j := strings.Index(loc[rest:], "//"); j >= 0 {
		r.Source, r.Path = loc[:rest+j], loc[rest+j+2:]
		if r.Path == "" {
			return r, errors.New("the skill path after // is empty; name the skill's folder, as in owner/repo//skills/name, or drop the //")
		}
		if !InsideRel(r.Path) || strings.HasPrefix(r.Path, "/") {
			return r, fmt.Errorf("skill path %q leaves the source; give a folder inside it, such as skills/name", r.Path)
		}
		if strings.ContainsFunc(r.Path, unicode.IsSpace) {
			return r, fmt.Errorf("skill path %q contains a space; separate entries with commas", r.Path)
		}
		// Cleaned, so that one folder written two ways is one skill.
		if r.Path = path.Clean(r.Path); r.Path == "." {
			r.Path = ""
		}
	} else {
		r.Source = loc
	}
	if r.Source == "" {
		return r, errors.New("the source is empty; give owner/repo, a git URL, oci://host/repo or a local path")
	}
	if isTransport(r.Source) {
		return r, fmt.Errorf("source %q is a git remote helper (transport::address), which can run commands; use an https, ssh, git, file or oci URL", r.Source)
	}
	if strings.ContainsFunc(r.Source, unicode.IsSpace) {
		return r, fmt.Errorf("source %q contains a space; separate entries with commas", r.Source)
	}
	if strings.HasSuffix(r.Source, "://") {
		return r, fmt.Errorf("source %q has a scheme and no address", r.Source)
	}
	return r, nil
}

// Requires parses m's agent.requires; the parser already reported an
// invalid value, so an error here is for callers that did not look.
func (m *Manifest) Requires() ([]Requirement, error) {
	s, _ := m.Metadata["agent.requires"].(string)
	return ParseRequires(s)
}

// isTransport reports a git "transport::address" source, such as ext::,
// which add refuses too.
func isTransport(s string) bool {
	i := strings.Index(s, "::")
	if i <= 0 {
		return false
	}
	for j, c := range s[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}
