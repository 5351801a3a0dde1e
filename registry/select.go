package registry

import (
	"fmt"
	"strings"
)

// Select returns the skills an AGENT_SKILLS value activates (SPEC §7), in
// canonical order. entries are the installed skills merged with the bundled
// ones (Source "bundled", Trusted true). Unknown or untrusted names give a
// warning that says how to fix it; the rest still load. A NamedOnly skill
// is active only when named.
func Select(entries []Entry, spec string) ([]Entry, []string) {
	if sortedUnique(entries) {
		// Already merged (workspace.AllEntries): no copy, no map.
		return selectSorted(entries, spec)
	}
	// An installed skill overrides a bundled one of the same name.
	merged := map[string]Entry{}
	for _, e := range entries {
		if e.Canonical == "" {
			c, err := Canonical(e.Name)
			if err != nil {
				continue
			}
			e.Canonical = c
		}
		if prev, ok := merged[e.Canonical]; ok && prev.Source != SourceBundled {
			continue
		}
		merged[e.Canonical] = e
	}
	sorted := make([]Entry, 0, len(merged))
	for _, e := range merged {
		sorted = append(sorted, e)
	}
	sortEntries(sorted)
	return selectSorted(sorted, spec)
}

// sortedUnique reports whether entries have canonical names, strictly
// increasing.
func sortedUnique(entries []Entry) bool {
	for i := range entries {
		if entries[i].Canonical == "" || i > 0 && entries[i-1].Canonical >= entries[i].Canonical {
			return false
		}
	}
	return true
}

func selectSorted(sorted []Entry, spec string) ([]Entry, []string) {
	usable := func(e *Entry) bool { return e.Trusted || e.Source == SourceBundled }
	var active []Entry
	var warnings []string
	switch strings.ToLower(strings.TrimSpace(spec)) {
	case "", "none":
		return nil, nil
	case "all":
		active = make([]Entry, 0, len(sorted))
		for i := range sorted {
			if usable(&sorted[i]) && !sorted[i].NamedOnly {
				active = append(active, sorted[i])
			}
		}
		return active, nil
	case "all-untrusted":
		for _, e := range sorted {
			if !e.NamedOnly {
				active = append(active, e)
			}
		}
		return active, nil
	}
	byName := make(map[string]Entry, len(sorted))
	for _, e := range sorted {
		byName[e.Canonical] = e
	}
	picked := map[string]bool{}
	for _, raw := range strings.Split(spec, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		c, err := Canonical(name)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: %q is not a valid skill name; list names separated by commas", name))
			continue
		}
		e, ok := byName[c]
		switch {
		case !ok:
			names := make([]string, 0, len(sorted))
			for _, e := range sorted {
				names = append(names, e.Canonical)
			}
			if s := Suggest(c, names); s != "" {
				warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not installed; did you mean %s? (see agent skill list)", name, s))
				continue
			}
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not installed; install it with agent skill add <source>, or see agent skill list", name))
		case !usable(&e):
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not trusted, so it is not loaded; trust it with agent skill trust %s, or use AGENT_SKILLS=all-untrusted", name, c))
		default:
			picked[c] = true
		}
	}
	for _, e := range sorted {
		if picked[e.Canonical] {
			active = append(active, e)
		}
	}
	return active, warnings
}
