package catalog

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/agentskills/agent/registry/manifest"
)

// Kinds of where a Skill was found.
const (
	KindInstalled = "installed"
	KindGit       = "git"
	KindOCI       = "oci"
	KindIndex     = "index" // a skills.sh-compatible search API
)

// Permissions is what a skill declares it needs (SPEC §3 permissions).
type Permissions struct {
	FSRead  []string `json:"fs_read,omitempty"`
	FSWrite []string `json:"fs_write,omitempty"`
	Network []string `json:"network,omitempty"`
	Env     []string `json:"env,omitempty"`
}

func permissionsOf(p manifest.Permissions) Permissions {
	return Permissions{FSRead: p.FS.Read, FSWrite: p.FS.Write, Network: p.Network, Env: p.Env}
}

// Skill is one skill a search can find.
type Skill struct {
	// ID is what `agent skill add` takes: the source, with "#PATH" when
	// the skill is one folder of a repository holding several.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Source is where add fetches it: a git URL, oci://HOST/REPO, or
	// owner/repo from a search API.
	Source string `json:"source"`
	Path   string `json:"path,omitempty"` // the skill's folder in the repository
	Kind   string `json:"kind"`
	// Version is the latest version known; Versions every one (OCI tags).
	Version  string   `json:"version,omitempty"`
	Versions []string `json:"versions,omitempty"`
	// Pin is the commit SHA or the artifact's sha256: digest surveyed.
	Pin string `json:"pin,omitempty"`
	// Signer is the accepted key that signed it; "" when none did.
	Signer      string      `json:"signer,omitempty"`
	Signed      bool        `json:"signed"`
	Permissions Permissions `json:"permissions"`
	// Installs is what a search API reported; 0 elsewhere.
	Installs int `json:"installs,omitempty"`
	// Installed is set when this skill is installed here.
	Installed bool `json:"installed,omitempty"`
	// Audit is agent skill audit's summary of its files ("no findings",
	// "1 critical, 2 medium"), "" when it was not audited.
	Audit string `json:"audit,omitempty"`
	// Manifest is the SKILL.md text, when read (catalog pages).
	Manifest string `json:"-"`
}

// ID is the add argument of a skill at folder path of source.
func ID(source, path string) string {
	if path == "" || path == "." {
		return source
	}
	return source + "#" + path
}

// SplitID undoes ID: the source and the skill's folder (or name), ok
// false when id names no skill inside its source. A fragment never
// belongs to a git URL, so "#" cannot be part of a real source.
func SplitID(id string) (source, skill string, ok bool) {
	source, skill, ok = strings.Cut(id, "#")
	if !ok || source == "" || skill == "" || strings.Contains(skill, "#") {
		return id, "", false
	}
	return source, skill, true
}

// Score weighs how well s matches the lowercased query words: a word in
// the name counts more than every word of a long query in the
// description, so name matches rank above description matches.
func Score(words []string, s Skill) float64 {
	return scoreLower(words, strings.ToLower(s.Name), strings.ToLower(s.Description))
}

// scoreLower is Score of a lowercased name and description.
func scoreLower(words []string, name, desc string) float64 {
	var sc float64
	for _, w := range words {
		switch {
		case name == w:
			sc += 200
		case strings.Contains(name, w):
			sc += 100
		}
		if strings.Contains(desc, w) {
			sc++
		}
	}
	return sc
}

// Words splits a query into lowercased words.
func Words(query string) []string {
	return strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	})
}

// Rank orders skills for query: by Score, then installed ones, then
// installs, name and source. With a query, skills that match no word are
// dropped, except those a search API returned (it matched them by its
// own rules, on text this host does not see).
func Rank(query string, skills []Skill) []Skill {
	words := Words(query)
	type scored struct {
		s  Skill
		sc float64
	}
	var out []scored
	for _, s := range skills {
		sc := Score(words, s)
		if len(words) > 0 && sc == 0 {
			if s.Kind != KindIndex {
				continue
			}
			sc = 0.5
		}
		out = append(out, scored{s, sc})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.sc, a.sc); c != 0 {
			return c
		}
		if a.s.Installed != b.s.Installed {
			if a.s.Installed {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.s.Installs, a.s.Installs); c != 0 {
			return c
		}
		if c := cmp.Compare(a.s.Name, b.s.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.s.Source, b.s.Source)
	})
	ranked := make([]Skill, len(out))
	for i, x := range out {
		ranked[i] = x.s
	}
	return ranked
}

// Merge joins the installed skills with those found in sources: a found
// skill that is installed (same source and folder, or for a search API's
// hit, which knows no folder, same source and name) is marked so and the
// installed copy dropped, keeping the source's latest version.
func Merge(installed, found []Skill) []Skill {
	type key struct{ source, path string }
	at := map[key]int{}
	out := slices.Clone(found)
	for i, s := range out {
		if s.Kind == KindIndex {
			at[key{s.Source, "name:" + s.Name}] = i
			continue
		}
		at[key{s.Source, s.Path}] = i
	}
	for _, s := range installed {
		i, ok := at[key{s.Source, s.Path}]
		if !ok {
			i, ok = at[key{s.Source, "name:" + s.Name}]
		}
		if ok {
			out[i].Installed = true
			continue
		}
		out = append(out, s)
	}
	return out
}

func sortStable[T any](s []T, less func(a, b T) bool) {
	slices.SortStableFunc(s, func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}
