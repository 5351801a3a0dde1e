package deps

import (
	"fmt"

	"github.com/agentskills/agent/registry/manifest"
)

// Move is a new version an update would take for an installed skill.
type Move struct {
	Version  string
	Requires []manifest.Requirement // the new version's agent.requires
}

// Settle decides which of the moves the installed graph allows, judging
// each against the others' new requirements, not only the current ones:
//   - a move is held when a skill (at its new version if it moves too)
//     requires it at a constraint its new version fails while its current
//     version passes;
//   - a move is held when its new version requires an installed skill at
//     a version that skill will not have;
//   - what a move newly requires that nothing installed provides is
//     returned as missing, for the caller to install.
//
// Requirements that are unmet already stay as they are. held maps a name
// to why it stays.
func Settle(installed []Installed, moves map[string]Move) (held map[string]string, missing []Unmet) {
	_, before := Check(installed)
	known := map[string]bool{}
	for _, u := range before {
		known[u.Skill+" "+u.Req.String()] = true
	}
	current := map[string]Installed{}
	for _, s := range installed {
		current[s.Name] = s
	}
	held = map[string]string{}
	moving := func(name string) bool {
		_, ok := moves[name]
		return ok && held[name] == ""
	}
	for {
		after := make([]Installed, len(installed))
		for i, s := range installed {
			if moving(s.Name) {
				m := moves[s.Name]
				s.Version, s.Requires = m.Version, m.Requires
			}
			after[i] = s
		}
		_, unmet := Check(after)
		missing = missing[:0]
		changed := false
		for _, u := range unmet {
			if known[u.Skill+" "+u.Req.String()] {
				continue
			}
			switch {
			case u.Found == "":
				if moving(u.Skill) {
					missing = append(missing, u)
				}
			case moving(u.Found) && satisfies(parse(current[u.Found].Version), u.Req.Constraint):
				held[u.Found] = fmt.Sprintf("%s requires %s@%s, and the new version is %s", u.Skill, u.Found, u.Req.Constraint, orDash(u.Have))
				changed = true
			case moving(u.Skill):
				held[u.Skill] = fmt.Sprintf("its new version %s requires %s@%s, and %s would be at %s", orDash(moves[u.Skill].Version), u.Found, u.Req.Constraint, u.Found, orDash(u.Have))
				changed = true
			}
		}
		if !changed {
			return held, missing
		}
	}
}

func orDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}
