package cli

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
)

// placer is how commands reach the placements of SPEC §19.
type placer func(*registry.Store) (*placement.Manager, error)

// placements returns the manager of the skills' placements in other
// agents' folders: project folders under AGENT_WORKSPACE (or the current
// folder), user folders under HOME.
func (f *Factory) placements(store *registry.Store) (*placement.Manager, error) {
	env, err := f.placementEnv()
	if err != nil {
		return nil, err
	}
	return &placement.Manager{
		Store: store,
		Env:   env,
		Warn:  f.IO.Warn,
		Note:  func(s string) { fmt.Fprintln(f.IO.ErrOut, s) },
	}, nil
}

func (f *Factory) placementEnv() (placement.Env, error) {
	home := f.getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return placement.Env{}, fmt.Errorf("find the home folder for user-level agent folders: %w (set HOME)", err)
		}
		home = h
	}
	project := f.getenv("AGENT_WORKSPACE")
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return placement.Env{}, fmt.Errorf("find the project folder: %w", err)
		}
		project = wd
	}
	return placement.Env{Home: home, Project: project}, nil
}

// discovery is where skills are discovered besides AGENT_HOME (SPEC §6):
// .agents/skills in the project and the home folder that placements use.
// Without a home or a current folder, discovery there is skipped: no
// command fails for it.
func (f *Factory) discovery() workspace.Discovery {
	env, err := f.placementEnv()
	if err != nil {
		return workspace.Discovery{Project: f.getenv("AGENT_WORKSPACE")}
	}
	return workspace.Discovery{Project: env.Project, User: env.Home}
}

// settlePlacements brings every placement in step after a command changed
// the installed set (before is the set it started from). A failure here
// is a warning: the command itself succeeded, and verify shows the rest.
// A skill with Go tools that is placed now and was not before (sync into a
// fresh home, trust of a placed skill, an update that brings tools) gets
// `agent mcp` registered with its agents, as add --agent does.
func settlePlacements(p placer, register func(client string) (string, bool, error), ios *IOStreams, store *registry.Store, before []registry.Entry) {
	if p == nil {
		return
	}
	has := slices.ContainsFunc(before, func(e registry.Entry) bool { return len(e.Placements) > 0 })
	after, err := store.List()
	if err != nil {
		ios.Warn("placements not updated: " + err.Error())
		return
	}
	if !has && !slices.ContainsFunc(after, func(e registry.Entry) bool { return len(e.Placements) > 0 }) {
		return
	}
	m, err := p(store)
	if err != nil {
		ios.Warn("placements not updated: " + err.Error())
		return
	}
	if err := m.Settle(before, after); err != nil {
		ios.Warn("placements: " + err.Error() + "; 'agent skill verify' shows each placement")
	}
	placedTools := func(e registry.Entry) bool {
		return e.Trusted && e.Plugin != nil && len(e.Tools) > 0 && len(e.Placements) > 0
	}
	var newly []registry.Entry
	names := map[string]bool{}
	for _, e := range after {
		i := slices.IndexFunc(before, func(b registry.Entry) bool { return b.Canonical == e.Canonical })
		if !placedTools(e) || i >= 0 && placedTools(before[i]) {
			continue
		}
		newly = append(newly, e)
		for _, pl := range e.Placements {
			for _, a := range pl.Agents {
				names[a] = true
			}
		}
	}
	if len(newly) == 0 {
		return
	}
	agents, err := placement.Lookup(strings.Join(slices.Sorted(maps.Keys(names)), ","), m.Env)
	if err == nil {
		err = registerMCPForPlaced(ios.ErrOut, register, agents, newly)
	}
	if err != nil {
		ios.Warn(err.Error())
	}
}

// lockPlacements records the placements a lock names on the installed
// entries, keeping what is already known of each folder (what was placed
// there, the folders made for it); settlePlacements then makes them.
func lockPlacements(p placer, store *registry.Store, l *registry.Lock) error {
	var m *placement.Manager
	for _, le := range l.Skills {
		if len(le.Placements) == 0 {
			continue
		}
		if m == nil {
			var err error
			if m, err = p(store); err != nil {
				return err
			}
		}
		e, err := store.Get(le.Name)
		if err != nil {
			continue // not installed: sync said why
		}
		var ps []registry.Placement
		for _, lp := range le.Placements {
			np := registry.Placement{Folder: lp.Folder, Dir: m.Env.Resolve(lp.Folder), Agents: lp.Agents, Link: lp.Link}
			for _, old := range e.Placements {
				if old.Dir == np.Dir && old.Link == np.Link {
					np.Placed, np.Made = old.Placed, old.Made
				}
			}
			ps = append(ps, np)
		}
		for _, old := range e.Placements {
			if !slices.ContainsFunc(ps, func(q registry.Placement) bool { return q.Dir == old.Dir }) {
				ps = append(ps, old) // placed here, not yet locked: kept
			}
		}
		if _, err := store.SetPlacements(e.Canonical, ps); err != nil {
			return err
		}
	}
	return nil
}
