package registry

import (
	"github.com/agentskills/agent/registry/deps"
)

// Dependencies matches the agent.requires of the installed skills against
// the installed set (SPEC §21): which skill requires which, and what is
// missing or at a version a constraint refuses. A skill whose SKILL.md
// does not load or parse requires nothing here; check reports it anyway.
func Dependencies(entries []Entry) ([]deps.Edge, []deps.Unmet) {
	return deps.Check(InstalledDeps(entries))
}

// InstalledDeps is what the dependency checks need of each installed
// skill fetched from a source.
func InstalledDeps(entries []Entry) []deps.Installed {
	var in []deps.Installed
	for _, e := range entries {
		if !e.fetched() {
			continue
		}
		d := deps.Installed{Name: e.Canonical, URL: e.URL, Path: e.Subdir, Version: e.Version}
		if m, _, err := LoadInstalled(e); err == nil {
			d.Requires, _ = m.Requires()
		}
		in = append(in, d)
	}
	return in
}
