package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/audit"
	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/trust"
)

type removeOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)
	// Discovery finds the skills of .agents/skills folders (SPEC §6).
	Discovery func() workspace.Discovery
	Config    func() (*Config, error)
	Placer    placer
	// Unregister takes `agent mcp` out of a client's project file, as
	// placing a skill with Go tools put it there (SPEC §19).
	Unregister func(client, project string) (path string, removed bool, err error)

	Name string
	Yes  bool
	// WithDeps removes the skills this one requires that nothing else
	// installed requires (SPEC §21).
	WithDeps bool
}

func newCmdRemove(f *Factory, runF func(context.Context, *removeOptions) error) *cobra.Command {
	opts := &removeOptions{IO: f.IO, Store: f.Store, Discovery: f.discovery, Config: f.Config, Placer: f.placements, Unregister: f.unregisterPlacedMCP}
	cmd := &cobra.Command{
		Use:     "remove <name>",
		Aliases: []string{"rm", "uninstall"},
		Short:   "Delete an installed skill, its built plugin and its entry",
		Long: dedent(`
			Delete an installed skill: its folder, its built plugin binary and its
			registry entry. On a terminal you are asked first; --yes skips the
			question and is required when there is no terminal.

			Its placements in other agents' folders (add --agent) go too.

			A skill that another installed skill requires (metadata agent.requires)
			is not removed: remove the skill that requires it first. --with-deps
			also removes the skills this one requires that nothing else requires.

			Bundled skills cannot be removed; leave them out of AGENT_SKILLS instead.
		`),
		Example: dedent(`
			$ agent skill remove weather
			$ agent skill remove weather --yes
			$ agent skill remove release-notes --with-deps
		`),
		Args: exactArgs(1, "the <name> of an installed skill"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return removeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.WithDeps, "with-deps", false, "also remove the skills it requires that no other skill requires")
	return cmd
}

func removeRun(ctx context.Context, opts *removeOptions) error {
	shortLived()
	store, err := opts.Store()
	if err != nil {
		return err
	}
	e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), opts.Name)
	if err != nil {
		return err
	}
	if e.Source == "bundled" {
		// An installed skill with a bundled name, which an older agent
		// let add install, is never loaded; it can still be removed.
		if ie, gerr := store.Get(e.Canonical); gerr == nil {
			e = ie
		}
	}
	if e.Source == "bundled" {
		return fmt.Errorf("remove %s: %w", e.Name, errBundledFixed)
	}
	if e.Source == registry.SourceDiscovered {
		return fmt.Errorf("remove %s: it is not installed but discovered in %s, a folder agent does not manage; delete that folder to remove it", e.Canonical, e.Path)
	}
	installed, err := store.List()
	if err != nil {
		return err
	}
	edges, _ := registry.Dependencies(installed)
	if by := deps.Requirers(edges, e.Canonical); len(by) > 0 {
		return fmt.Errorf("remove %s: %w: %s requires it; remove %s first (--with-deps there removes %s too when nothing else needs it)", e.Name, deps.ErrRequired, strings.Join(by, ", "), by[0], e.Canonical)
	}
	var also []registry.Entry
	if opts.WithDeps {
		for _, n := range deps.Orphans(edges, e.Canonical) {
			if d, err := store.Get(n); err == nil {
				also = append(also, d)
			}
		}
	}
	if !opts.Yes {
		if !opts.IO.CanPrompt() {
			return fmt.Errorf("remove %s: %w", e.Name, errRemoveNoTTY)
		}
		q := fmt.Sprintf("Remove %s (%s)?", e.Name, e.Path)
		if len(also) > 0 {
			var names []string
			for _, d := range also {
				names = append(names, d.Canonical)
			}
			q = fmt.Sprintf("Remove %s (%s) and the skills only it requires: %s?", e.Name, e.Path, strings.Join(names, ", "))
		}
		ok, err := confirm(opts.IO, q)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("remove %s: %w", e.Name, errCanceled)
		}
	}
	for _, x := range append([]registry.Entry{e}, also...) {
		if err := removeOne(ctx, opts, store, x); err != nil {
			return err
		}
	}
	return nil
}

// removeOne deletes one installed skill and what hangs off it: its help
// and audit state, its placements and the MCP registrations they made.
func removeOne(ctx context.Context, opts *removeOptions, store *registry.Store, e registry.Entry) error {
	// Before the folder goes: the help cache is keyed by script contents.
	if cfg, err := opts.Config(); err == nil {
		if err := install.RemoveState(cfg.Home, e); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", err)
		}
		if err := audit.Forget(cfg.Home, e.Canonical); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "warning: forget the last audit of %s: %v\n", e.Canonical, err)
		}
	}
	if len(e.Placements) > 0 {
		// The copies in other agents' folders go first: once the entry is
		// gone nothing records them.
		m, err := opts.Placer(store)
		if err != nil {
			return err
		}
		if err := m.Remove(e); err != nil {
			return fmt.Errorf("remove %s: %w; nothing else was removed", e.Name, err)
		}
	}
	if _, err := store.Remove(ctx, e.Canonical); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Removed %s\n", e.Name)
	if opts.Unregister != nil {
		unregisterMCP(opts.IO.ErrOut, store, e, opts.Unregister)
	}
	return nil
}

// mcpProjects are the MCP clients and project folders that e's project
// placements registered `agent mcp` in, when e has Go tools.
func mcpProjects(e registry.Entry) map[[2]string]bool {
	out := map[[2]string]bool{}
	if e.Plugin == nil || len(e.Tools) == 0 {
		return out
	}
	for _, p := range e.Placements {
		if p.Placed == "" || strings.HasPrefix(p.Folder, "~") {
			continue
		}
		project := strings.TrimSuffix(p.Dir, string(filepath.Separator)+filepath.FromSlash(p.Folder))
		if project == p.Dir {
			continue
		}
		for _, name := range p.Agents {
			if a, ok := placement.ByName(name); ok && a.MCP != "" {
				out[[2]string{a.MCP, project}] = true
			}
		}
	}
	return out
}

// unregisterMCP drops the MCP registration that e's placements made once
// no other placed skill with Go tools needs it there; an entry the user
// changed is left (mcp.RemoveServer). A failure is a warning: the skill
// is gone either way.
func unregisterMCP(errOut io.Writer, store *registry.Store, e registry.Entry, unregister func(client, project string) (string, bool, error)) {
	gone := mcpProjects(e)
	if len(gone) == 0 {
		return
	}
	rest, err := store.List()
	if err != nil {
		fmt.Fprintf(errOut, "warning: %v\n", err)
		return
	}
	for _, o := range rest {
		for k := range mcpProjects(o) {
			delete(gone, k)
		}
	}
	keys := make([][2]string, 0, len(gone))
	for k := range gone {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		path, removed, err := unregister(k[0], k[1])
		switch {
		case err != nil:
			fmt.Fprintf(errOut, "warning: %v\n", err)
		case removed:
			fmt.Fprintf(errOut, "Removed the MCP server \"agent\" from %s: no placed skill with tools is left there (the previous file is %s.bak)\n", path, path)
		}
	}
}
