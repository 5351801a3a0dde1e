package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

// AgentsSkills is the folder, in a project and in the user's home, whose
// skills are discovered (SPEC §6). Antigravity's .agent/skills is not it:
// .agent/ is this host's own state folder in a workspace (and ~/.agent
// is AGENT_HOME), and what lies there is never loaded as a skill.
var AgentsSkills = filepath.Join(".agents", "skills")

// Discovery says where skills are found besides AGENT_HOME: the
// .agents/skills folder of the project and of the user's home. The zero
// value finds none.
type Discovery struct {
	Project string // the project folder: AGENT_WORKSPACE, else the current folder
	User    string // the user's home folder
}

// discovered finds the skills of d's folders that installed (the
// registry's and bundled entries) does not already account for. Each is
// an entry with Source registry.SourceDiscovered, untrusted (trust sets
// that). A folder that is a placement of an installed skill
// (SPEC §19) is that skill, loaded once; a project skill hides a user
// skill of the same name, with a warning naming both folders.
func discovered(d Discovery, installed []registry.Entry) ([]registry.Entry, []string) {
	if d.Project == "" && d.User == "" {
		return nil, nil
	}
	placed := map[string]bool{}
	for _, e := range installed {
		for _, p := range e.Placements {
			if p.Placed != "" {
				placed[cleanPath(p.SkillDir(e.Canonical))] = true
			}
		}
	}
	var (
		out      []registry.Entry
		warnings []string
		seen     = map[string]found{}
	)
	roots := []string{d.Project, d.User}
	if d.User != "" && cleanPath(d.User) == cleanPath(d.Project) {
		roots = roots[:1] // the project is the home folder: one folder
	}
	for level, root := range roots {
		if root == "" {
			continue
		}
		dir := filepath.Join(root, AgentsSkills)
		children, err := os.ReadDir(dir)
		if err != nil {
			if !os.IsNotExist(err) {
				warnings = append(warnings, fmt.Sprintf("skills in %s are not loaded: %v", dir, err))
			}
			continue
		}
		for _, c := range children {
			p := cleanPath(filepath.Join(dir, c.Name()))
			if placed[p] {
				continue
			}
			if c.Type()&fs.ModeSymlink != 0 {
				if gitsrc.ManifestPath(p) != "" {
					warnings = append(warnings, fmt.Sprintf("%s is a symbolic link, so it is not loaded (discovery never follows links); copy the skill there instead", p))
				}
				continue
			}
			if !c.IsDir() {
				continue
			}
			if gitsrc.ManifestPath(p) == "" {
				continue
			}
			e := discoveredEntry(p)
			if first, ok := seen[e.Canonical]; ok {
				if first.level < level {
					warnings = append(warnings, fmt.Sprintf("skill %s: the project's %s is used, not the user's %s (a project skill overrides a user skill of the same name)", e.Canonical, first.dir, p))
				} else {
					warnings = append(warnings, fmt.Sprintf("skill %s is in both %s and %s: the first is used; rename one of them", e.Canonical, first.dir, p))
				}
				continue
			}
			seen[e.Canonical] = found{dir: p, level: level}
			out = append(out, e)
		}
	}
	return out, warnings
}

// found is where a discovered name was seen first: 0 the project, 1 the
// user's folder.
type found struct {
	dir   string
	level int
}

// discoveredEntry is the entry of the discovered skill in dir. A SKILL.md
// that does not load still names an entry (by its folder), so that the
// view reports why it failed instead of dropping it.
func discoveredEntry(dir string) registry.Entry {
	e := registry.Entry{Name: filepath.Base(dir), Path: dir}
	e.Source = registry.SourceDiscovered
	if m, _, err := LoadManifest(e); err == nil {
		e.Name, e.Description = m.Name, m.Description
		e.Canonical, _ = manifest.Canonical(m.Name)
	}
	if e.Canonical == "" {
		if c, err := manifest.Canonical(e.Name); err == nil {
			e.Canonical = c
		} else {
			e.Canonical = strings.ToLower(e.Name)
		}
	}
	return e
}

// trust marks e trusted when the user trusted its folder under this name,
// with the hash of the files then, which the first use checks.
func applyTrust(e *registry.Entry, trusted []trust.FolderTrust) {
	for _, t := range trusted {
		if t.Path == e.Path && t.Canonical == e.Canonical {
			e.Trusted, e.DirHash = true, t.DirHash
		}
	}
}

// mergeDiscovered adds the discovered skills to all (sorted by canonical
// name, one entry per name). An installed or bundled skill keeps its name:
// the discovered one is left out with a warning.
func mergeDiscovered(all, found []registry.Entry) ([]registry.Entry, []string) {
	var warnings []string
	for _, e := range found {
		i, ok := slices.BinarySearchFunc(all, e.Canonical, func(x registry.Entry, c string) int { return strings.Compare(x.Canonical, c) })
		if ok {
			msg := fmt.Sprintf("skill %s in %s is not loaded: an installed skill has that name; rename one of them", e.Canonical, e.Path)
			if all[i].Source == registry.SourceBundled {
				msg = fmt.Sprintf("skill %s in %s is not loaded: %s is the name of a skill bundled with agent, which no other skill takes; rename the skill in its SKILL.md", e.Canonical, e.Path, e.Canonical)
			}
			warnings = append(warnings, msg)
			continue
		}
		all = slices.Insert(all, i, e)
	}
	return all, warnings
}

// cleanPath is p absolute and clean, for comparing folders.
func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
