package deps

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// Installed is what the dependency checks need of an installed skill.
type Installed struct {
	Name     string // canonical
	URL      string // the source URL it was installed from
	Path     string // its folder in the source; "" is the root
	Version  string
	Requires []manifest.Requirement
}

// Edge is one requirement met by an installed skill.
type Edge struct {
	From, To string
	Req      manifest.Requirement
}

// Unmet is a requirement of an installed skill that no installed skill
// meets: Found is "" when none comes from that source and path, or the
// installed skill whose version the constraint refuses.
type Unmet struct {
	Skill string
	Req   manifest.Requirement
	Found string
	Have  string // Found's version
}

func (u Unmet) String() string {
	if u.Found == "" {
		return fmt.Sprintf("it requires %s, which is not installed", u.Req)
	}
	v := u.Have
	if v == "" {
		v = "no version"
	}
	return fmt.Sprintf("it requires %s@%s, and %s has %s", u.Found, u.Req.Constraint, u.Found, v)
}

// Check matches every installed skill's requirements against the
// installed set.
func Check(skills []Installed) ([]Edge, []Unmet) {
	var edges []Edge
	var unmet []Unmet
	for _, s := range skills {
		for _, r := range s.Requires {
			t, ok := meets(r, skills)
			if !ok {
				unmet = append(unmet, Unmet{Skill: s.Name, Req: r})
				continue
			}
			edges = append(edges, Edge{From: s.Name, To: t.Name, Req: r})
			if !satisfies(parse(t.Version), r.Constraint) {
				unmet = append(unmet, Unmet{Skill: s.Name, Req: r, Found: t.Name, Have: t.Version})
			}
		}
	}
	return edges, unmet
}

// meets finds the installed skill a requirement names: same source URL,
// and the same folder (any folder when the requirement names none and the
// source holds one installed skill).
func meets(r manifest.Requirement, skills []Installed) (Installed, bool) {
	want := r.Source
	if src, err := gitsrc.ParseSource(r.Source); err == nil {
		want = src.URL
	}
	var at []Installed
	for _, s := range skills {
		if sameURL(s.URL, want) {
			if r.Path != "" && cleanPath(s.Path) == cleanPath(r.Path) {
				return s, true
			}
			at = append(at, s)
		}
	}
	if r.Path == "" && len(at) == 1 {
		return at[0], true
	}
	return Installed{}, false
}

func sameURL(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.TrimRight(s, "/"), ".git") }
	return norm(a) == norm(b)
}

func cleanPath(p string) string {
	if p = path.Clean(strings.Trim(p, "/")); p == "." {
		return ""
	}
	return p
}

// Requirers are the skills whose requirements name name, sorted.
func Requirers(edges []Edge, name string) []string {
	var out []string
	for _, e := range edges {
		if e.To == name && !contains(out, e.From) {
			out = append(out, e.From)
		}
	}
	sort.Strings(out)
	return out
}

// Orphans are the skills that removing name leaves required by nothing
// else: its dependencies, theirs, and so on, sorted. A dependency that a
// skill outside the removed set still requires stays.
func Orphans(edges []Edge, name string) []string {
	gone := map[string]bool{name: true}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			if !gone[e.From] || gone[e.To] {
				continue
			}
			needed := false
			for _, o := range edges {
				if o.To == e.To && !gone[o.From] {
					needed = true
					break
				}
			}
			if !needed {
				gone[e.To] = true
				changed = true
			}
		}
	}
	var out []string
	for n := range gone {
		if n != name {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
