package registry

import (
	"fmt"
	"strings"

	"github.com/agentskills/agent/registry/manifest"
)

// Select returns the skills an AGENT_SKILLS value activates (SPEC §7), in
// canonical order. entries are the installed skills merged with the bundled
// ones (Source "bundled", Trusted true). Unknown or untrusted names give a
// warning that says how to fix it; the rest still load. A NamedOnly skill
// is active only when named.
func Select(entries []Entry, spec string) ([]Entry, []string) {
	if sortedUnique(entries) {
		// Already merged (workspace.AllEntries): no map.
		mask, warnings := selectSorted(entries, spec)
		return picked(entries, mask), warnings
	}
	// A bundled skill keeps its name (SPEC §5): an installed one of the
	// same name, from a registry written before add refused it, is left
	// out.
	merged := map[string]Entry{}
	for _, e := range entries {
		if e.Canonical == "" {
			c, err := manifest.Canonical(e.Name)
			if err != nil {
				continue
			}
			e.Canonical = c
		}
		if prev, ok := merged[e.Canonical]; ok && (e.Source != SourceBundled || prev.Source == SourceBundled) {
			continue
		}
		merged[e.Canonical] = e
	}
	sorted := make([]Entry, 0, len(merged))
	for _, e := range merged {
		sorted = append(sorted, e)
	}
	sortEntries(sorted)
	mask, warnings := selectSorted(sorted, spec)
	return picked(sorted, mask), warnings
}

// Selected is Select as one flag per entry, for entries sorted by
// canonical name without repeats (as workspace.AllEntries merges them):
// with 1,000 skills it copies no entry.
func Selected(entries []Entry, spec string) ([]bool, []string) {
	if sortedUnique(entries) {
		mask, warnings := selectSorted(entries, spec)
		if mask == nil {
			mask = make([]bool, len(entries))
		}
		return mask, warnings
	}
	active, warnings := Select(entries, spec)
	on := make(map[string]bool, len(active))
	for i := range active {
		on[active[i].Canonical] = true
	}
	mask := make([]bool, len(entries))
	for i := range entries {
		c := entries[i].Canonical
		if c == "" {
			c, _ = manifest.Canonical(entries[i].Name)
		}
		mask[i] = on[c]
	}
	return mask, warnings
}

func picked(sorted []Entry, mask []bool) []Entry {
	var out []Entry
	for i := range mask {
		if mask[i] {
			out = append(out, sorted[i])
		}
	}
	return out
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

// selectSorted flags the entries spec activates; nil when none.
func selectSorted(sorted []Entry, spec string) ([]bool, []string) {
	usable := func(e *Entry) bool { return e.Trusted || e.Source == SourceBundled }
	var warnings []string
	switch strings.ToLower(strings.TrimSpace(spec)) {
	case "", "none":
		return nil, nil
	case "all":
		mask := make([]bool, len(sorted))
		for i := range sorted {
			mask[i] = usable(&sorted[i]) && !sorted[i].NamedOnly
		}
		return mask, nil
	case "all-untrusted":
		mask := make([]bool, len(sorted))
		for i := range sorted {
			mask[i] = !sorted[i].NamedOnly
		}
		return mask, nil
	}
	byName := make(map[string]int, len(sorted))
	for i := range sorted {
		byName[sorted[i].Canonical] = i
	}
	var mask []bool
	for _, raw := range strings.Split(spec, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		c, err := manifest.Canonical(name)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: %q is not a valid skill name; list names separated by commas", name))
			continue
		}
		i, ok := byName[c]
		switch {
		case !ok:
			names := make([]string, 0, len(sorted))
			for _, e := range sorted {
				names = append(names, e.Canonical)
			}
			if s := manifest.Suggest(c, names); s != "" {
				warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not installed; did you mean %s? (see agent skill list)", name, s))
				continue
			}
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not installed; install it with agent skill add <source>, or see agent skill list", name))
		case !usable(&sorted[i]):
			warnings = append(warnings, fmt.Sprintf("AGENT_SKILLS: skill %q is not trusted, so it is not loaded; trust it with agent skill trust %s, or use AGENT_SKILLS=all-untrusted", name, c))
		default:
			if mask == nil {
				mask = make([]bool, len(sorted))
			}
			mask[i] = true
		}
	}
	return mask, warnings
}
