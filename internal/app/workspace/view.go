package workspace

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

// Why a skill is not active, as `agent check --json` reports it.
const (
	ReasonNotSelected  = "not_in_agent_skills"
	ReasonUntrusted    = "untrusted"
	ReasonIncompatible = "incompatible"
	ReasonLoadFailed   = "load_failed"
)

// SkillState is one installed or bundled skill and whether it is active.
type SkillState struct {
	Entry    *registry.Entry
	Manifest *manifest.Manifest // nil when SKILL.md did not load (or was not read)
	Active   bool
	Selected bool   // named by AGENT_SKILLS (or matched by all/all-untrusted)
	Reason   string // one of the Reason constants when not active
	Detail   string // one line: why it failed to load or is incompatible
	Scripts  int
	// Indexed is set when Manifest comes from the registry's listing (no
	// Body): SKILL.md was not parsed and the skill folder was not read.
	Indexed bool
	// Problems are the SKILL.md warnings, recoveries among them (SPEC §3).
	Problems []manifest.Problem
	// Output is what follows Detail's line in the error, such as go
	// build's compiler output when a linked skill's plugin did not build.
	Output string
	// RequiredBy are the skills AGENT_SKILLS named that activated this
	// one as their dependency (SPEC §21).
	RequiredBy []string
	// Code is the error code a call into a skill that failed to load
	// gets, where the failure has one of its own (CodeSkillTampered,
	// CodePluginBuildFailed); "" otherwise.
	Code string
}

// View is every known skill with its state. Building it reads each
// skill's SKILL.md and lists (never reads) its scripts/ folder, so it is
// what Layer 1 may be built from.
type View struct {
	Spec     string // AGENT_SKILLS
	Skills   []SkillState
	Warnings []string

	all []registry.Entry // the entries of Skills, in order: Load's ws.All
}

// Scope says which skills' SKILL.md LoadView reads.
type Scope int

const (
	// Selected reads only the SKILL.md of the skills AGENT_SKILLS selects:
	// all that Layer 1 needs. The others keep a nil Manifest and no Reason.
	Selected Scope = iota
	// Every reads every known skill's SKILL.md: what `agent check` reports.
	Every
)

// LoadView builds the view. It opens no file but the registry and, for
// skills whose registry listing is missing or whose SKILL.md changed since
// install, their SKILL.md. It starts no process, except one: when
// cfg.Relink is set, a selected linked (dev) skill whose folder changed is
// rebuilt here, so that a plugin that no longer compiles is a load failure
// with go build's output in every front end, `agent check` included.
func LoadView(ctx context.Context, cfg *Config, scope Scope) (*View, error) {
	store := cfg.Store()
	all, warnings, err := AllEntries(ctx, trust.Of(store), cfg.Discovery)
	if err != nil {
		return nil, err
	}
	listings := store.Listings()
	defer listings.Close()
	selected, more := registry.Selected(all, cfg.Skills)
	warnings = append(warnings, more...)
	for i := range all {
		if !selected[i] && slices.Contains(cfg.Always, all[i].Canonical) && (all[i].Trusted || all[i].Source == registry.SourceBundled) {
			selected[i] = true
		}
	}
	// Dependencies (SPEC §21), from the listings: a skill AGENT_SKILLS
	// names activates the trusted skills it requires; under any spec, an
	// active skill whose requirement no active skill meets is turned off
	// below (checkDependencies), so that every front end and check agree.
	var byWhom map[string][]string
	var reqs map[int][]manifest.Requirement
	if namedSpec(cfg.Skills) {
		byWhom, reqs = withDependencies(all, selected)
	} else {
		_, reqs = withDependencies(all, append([]bool(nil), selected...))
	}
	v := &View{Spec: cfg.Skills, Warnings: warnings, Skills: make([]SkillState, 0, len(all)), all: all}
	manifests := listings.IndexedAll(all, func(i int) bool { return selected[i] || scope == Every })
	for i := range all {
		e := &all[i]
		st := SkillState{Entry: e, Selected: selected[i], RequiredBy: byWhom[e.Canonical]}
		if !st.Selected && scope != Every {
			v.Skills = append(v.Skills, st)
			continue
		}
		if st.Selected && e.Source == registry.SourceDev && cfg.Relink != nil {
			fresh, err := cfg.Relink(ctx, *e)
			if err != nil {
				st.Reason, st.Detail = ReasonLoadFailed, oneLine(err, "")
				st.Output = rest(err.Error())
				if errors.Is(err, ErrPluginBuild) {
					st.Code = CodePluginBuildFailed
				}
				v.Skills = append(v.Skills, st)
				continue
			}
			all[i] = fresh // e and st.Entry point to it
			manifests[i], _ = listings.Indexed(e)
		}
		m := manifests[i]
		indexed := m != nil
		var err error
		if indexed {
			st.Problems = e.Listing.Warnings
		} else {
			m, st.Problems, err = LoadManifest(*e)
		}
		st.Indexed = indexed
		switch {
		case err != nil:
			st.Reason, st.Detail = ReasonLoadFailed, oneLine(err, e.Path)
			if errors.Is(err, registry.ErrModified) {
				st.Code = CodeSkillTampered
			}
		case hasCompat(m) && manifest.CheckCompatibility(m, cfg.AgentVersion) != nil:
			st.Manifest = m
			st.Reason, st.Detail = ReasonIncompatible, oneLine(manifest.CheckCompatibility(m, cfg.AgentVersion), e.Path)
		default:
			st.Manifest = m
			switch {
			case st.Selected:
				st.Active = true
			case !e.Trusted && e.Source != registry.SourceBundled:
				st.Reason = ReasonUntrusted
			default:
				st.Reason = ReasonNotSelected
			}
		}
		switch {
		case st.Manifest != nil && indexed:
			st.Scripts = len(e.Listing.Runnable)
		case st.Manifest != nil:
			st.Scripts = countScripts(e.Path, st.Manifest)
		}
		v.Skills = append(v.Skills, st)
	}
	if reqs != nil {
		checkDependencies(v, reqs)
	}
	return v, nil
}

// hasCompat reports whether m limits the agent version at all, so that
// most skills cost no semver parse.
func hasCompat(m *manifest.Manifest) bool {
	return m.MinAgentVersion != "" || m.MaxAgentVersion != "" || m.AgentVersion != ""
}

// oneLine is the first line of err, with the skill's own folder left out of
// paths so that the reason stays short.
func oneLine(err error, dir string) string {
	msg := err.Error()
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
	}
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// rest is msg after its first line, without trailing blank lines.
func rest(msg string) string {
	_, after, ok := strings.Cut(msg, "\n")
	if !ok {
		return ""
	}
	return strings.TrimRight(after, " \t\r\n")
}

// Active returns the active skills in canonical order.
func (v *View) Active() []SkillState {
	var out []SkillState
	for _, s := range v.Skills {
		if s.Active {
			out = append(out, s)
		}
	}
	return out
}

// countScripts counts a skill's runnable scripts from the directory listing
// alone, as the script plugin finds them: no script is opened.
func countScripts(dir string, m *manifest.Manifest) int {
	if dir == "" {
		return 0
	}
	scripts, err := exec.List(dir, m.Scripts, m.ScriptsIgnore)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range scripts {
		if s.Err == nil {
			n++
		}
	}
	return n
}

// Launch says how plugin binaries are checked as they start on this
// machine, for the protection report of `agent check`: front ends learn it
// here because they do not import host (SPEC §2).
func Launch() string { return host.Launch() }
