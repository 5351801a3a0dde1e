package workspace

import (
	"strings"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/manifest"
)

// ReasonDependency: the skill requires one (agent.requires, SPEC §21)
// that is not installed, not at a version it accepts, or not active.
const ReasonDependency = "missing_dependency"

// namedSpec reports whether AGENT_SKILLS names skills rather than all,
// all-untrusted or none: only then are dependencies activated by name
// (all already activates every trusted dependency).
func namedSpec(spec string) bool {
	switch strings.ToLower(strings.TrimSpace(spec)) {
	case "", "none", "all", "all-untrusted":
		return false
	}
	return true
}

// requiresOf is an installed skill's agent.requires, from the listing
// the registry recorded at install (no SKILL.md is read), or from SKILL.md
// for a linked skill, whose folder is edited in place, and for an entry
// without a listing. None when its SKILL.md does not load (LoadView
// reports that on its own).
func requiresOf(e registry.Entry) []manifest.Requirement {
	if e.URL == "" && e.Source != registry.SourceDev {
		return nil
	}
	if e.Listing != nil && e.Source != registry.SourceDev {
		r, _ := manifest.ParseRequires(e.Listing.Requires)
		return r
	}
	m, _, err := LoadManifest(e)
	if err != nil {
		return nil
	}
	r, _ := m.Requires()
	return r
}

// withDependencies selects, transitively, the skills the selected ones
// require, when they are trusted; byWhom maps each skill selected so to
// the selected skills that required it.
//
// reqs is nil when no selected skill requires anything, the common case:
// then neither this nor checkDependencies builds the graph (0.7 ms of a
// listing of 1,000 skills).
func withDependencies(all []registry.Entry, selected []bool) (byWhom map[string][]string, reqs map[int][]manifest.Requirement) {
	byWhom = map[string][]string{}
	// reqs holds only the skills that require something: with 1,000
	// skills selected, a key for each cost more than the rest of the check.
	reqs = map[int][]manifest.Requirement{}
	read := make([]bool, len(all))
	some := false
	readReqs := func(i int) {
		if read[i] {
			return
		}
		read[i] = true
		if r := requiresOf(all[i]); len(r) > 0 {
			reqs[i], some = r, true
		}
	}
	for i := range all {
		if selected[i] {
			readReqs(i)
		}
	}
	if !some {
		return byWhom, nil
	}
	index := map[string]int{}
	in := make([]deps.Installed, len(all))
	for i, e := range all {
		index[e.Canonical] = i
		in[i] = deps.Installed{Name: e.Canonical, URL: e.URL, Path: e.Subdir, Version: e.Version, Requires: reqs[i]}
	}
	for changed := true; changed; {
		changed = false
		for i := range all {
			if selected[i] && !read[i] {
				readReqs(i)
				in[i].Requires = reqs[i]
			}
		}
		edges, _ := deps.Check(in)
		for _, ed := range edges {
			j := index[ed.To]
			if !selected[index[ed.From]] || selected[j] {
				continue
			}
			if all[j].Trusted || all[j].Source == registry.SourceBundled {
				selected[j], changed = true, true
				byWhom[ed.To] = append(byWhom[ed.To], ed.From)
			}
		}
	}
	return byWhom, reqs
}

// checkDependencies turns off an active skill whose requirement no active
// skill meets, and then the skills that required it, naming the reason.
func checkDependencies(v *View, reqs map[int][]manifest.Requirement) {
	in := make([]deps.Installed, 0, len(v.Skills))
	pos := map[string]int{}
	for i, s := range v.Skills {
		if !s.Active {
			continue
		}
		pos[s.Entry.Canonical] = i
		in = append(in, deps.Installed{Name: s.Entry.Canonical, URL: s.Entry.URL, Path: s.Entry.Subdir, Version: s.Entry.Version, Requires: reqs[i]})
	}
	for {
		_, unmet := deps.Check(in)
		if len(unmet) == 0 {
			return
		}
		off := map[string]bool{}
		for _, u := range unmet {
			st := &v.Skills[pos[u.Skill]]
			if st.Active {
				st.Active, st.Reason = false, ReasonDependency
				why := u.String()
				if u.Found == "" {
					why = "it requires " + u.Req.String() + ", which is not installed, or not trusted and active"
				}
				st.Detail = why
			}
			off[u.Skill] = true
		}
		kept := in[:0]
		for _, s := range in {
			if !off[s.Name] {
				kept = append(kept, s)
			}
		}
		in = kept
	}
}
