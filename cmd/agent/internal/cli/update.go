package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

type updateOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)
	Placer    placer
	// RegisterMCP registers `agent mcp` with a client when a skill with
	// Go tools becomes placed (see registerMCPForPlaced).
	RegisterMCP func(client string) (path string, wrote bool, err error)

	Config func() (*Config, error)

	Names     []string
	All       bool
	Yes       bool
	DryRun    bool
	TrustDeps bool
}

func newCmdUpdate(f *Factory, runF func(context.Context, *updateOptions) error) *cobra.Command {
	opts := &updateOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, RegisterMCP: f.registerPlacedMCP, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "update [name ...]",
		Short: "Move installed skills to their newest allowed commit",
		Long: dedent(`
			Fetch each named skill (or every one with --all) and move it to the
			newest commit its recorded ref or constraint allows: the highest
			matching tag for a version constraint, the tip for a branch. A skill
			pinned to a tag or a SHA stays where it is.

			For each skill that would move, the old and new SHA and version are
			shown and you are asked to confirm; --yes answers yes. Without a
			terminal --yes is required. Local edits in the skill's folder are
			discarded, after a warning. The plugin is rebuilt and its tools
			described again; on any failure the old version stays installed.

			Skills that require skills (agent.requires) move together: a new
			version that a requirer's constraint refuses is held, naming the
			requirer, and so is one whose new requirements the others will not
			meet. What a new version newly requires is installed first, audited
			as add does, and untrusted unless --trust-deps.
		`),
		Example: dedent(`
			# see what would change
			$ agent skill update --all --dry-run

			# update one skill without asking
			$ agent skill update weather --yes
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			if len(args) == 0 && !opts.All {
				return usageErr(fmt.Errorf("name the skills to update or pass --all; see '%s --help'", cmd.CommandPath()))
			}
			if len(args) > 0 && opts.All {
				return usageErr(fmt.Errorf("give skill names or --all, not both"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return updateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "update every installed skill")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would change and change nothing")
	cmd.Flags().BoolVar(&opts.TrustDeps, "trust-deps", false, "trust the skills a new version newly requires (agent.requires), as add --trust-deps does")
	return cmd
}

func updateRun(ctx context.Context, opts *updateOptions) error {
	for _, n := range opts.Names {
		if _, err := manifest.Canonical(n); err != nil {
			return err
		}
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	inst, err := opts.Installer()
	if err != nil {
		return err
	}
	before, err := store.List()
	if err != nil {
		return err
	}
	defer settlePlacements(opts.Placer, opts.RegisterMCP, opts.IO, store, before)
	progress := opts.IO.Progress()
	errOut := opts.IO.ErrOut
	pipe := registry.NewPipeline(store)
	base := registry.UpdateRequest{
		Names:        opts.Names,
		All:          opts.All,
		AgentVersion: Version,
		Progress:     progress,
		Warn:         opts.IO.Warn,
	}
	// First a look at every new version, changing nothing: the graph
	// moves within its constraints, and each move is judged against the
	// others' new agent.requires, not only the installed ones (deps.Settle).
	look := base
	look.DryRun = true
	plans, lookErr := pipe.Update(ctx, look, inst.Prepare)
	moves := map[string]deps.Move{}
	planned := map[string]registry.UpdatePlan{}
	var movers []string
	for _, r := range plans {
		if r.Status == registry.StatusWouldUpdate {
			moves[r.Name] = deps.Move{Version: r.NewVersion, Requires: r.Requires}
			planned[r.Name] = r.UpdatePlan
			movers = append(movers, r.Name)
		}
	}
	held, missing := deps.Settle(registry.InstalledDeps(before), moves)
	for _, name := range movers {
		if why := held[name]; why != "" {
			fmt.Fprintf(errOut, "%s: held at %s: %s\n", name, versionOrDash(planned[name].OldVersion), why)
		}
	}
	needs := map[string][]deps.Unmet{}
	for _, u := range missing {
		needs[u.Skill] = append(needs[u.Skill], u)
	}
	if opts.DryRun || len(movers) == 0 {
		for _, u := range missing {
			fmt.Fprintf(errOut, "%s: its new version requires %s, which update would install\n", u.Skill, u.Req)
		}
		printUpdates(opts.IO, plans, held)
		if len(plans) == 0 && lookErr == nil {
			fmt.Fprintln(errOut, "No skills installed from git; nothing to update.")
		}
		return lookErr
	}
	var cfg *Config
	if len(missing) > 0 {
		if cfg, err = opts.Config(); err != nil {
			return err
		}
	}
	type newlyAdded struct {
		graph []deps.Node
		added []registry.Entry
	}
	newDeps := map[string]newlyAdded{}
	req := base
	req.Names, req.All = movers, false
	req.Confirm = func(p registry.UpdatePlan) (bool, error) {
		if held[p.Name] != "" {
			return false, nil
		}
		if p.NewSHA != planned[p.Name].NewSHA {
			fmt.Fprintf(errOut, "%s: held: it moved again while updating (now %s); run update again\n", p.Name, shortSHA(p.NewSHA))
			return false, nil
		}
		// With --yes nothing is asked, and the result line on stdout
		// says old → new once.
		if !opts.Yes {
			fmt.Fprintf(errOut, "%s: %s\n", p.Name, workspace.EscapeTerminal(describePlan(p)))
		}
		if len(p.LocalEdits) > 0 {
			fmt.Fprintf(errOut, "warning: %s has local edits that will be discarded: %s\n", p.Name, strings.Join(p.LocalEdits, ", "))
		}
		ok := opts.Yes
		if !ok {
			if !opts.IO.CanPrompt() {
				return false, errUpdateNoTTY
			}
			var err error
			if ok, err = confirm(opts.IO, fmt.Sprintf("Update %s?", p.Name)); err != nil || !ok {
				return false, err
			}
		}
		// What the new version newly requires is installed first: if
		// that fails, the skill stays at its old version.
		if len(needs[p.Name]) > 0 {
			ns, added, err := installNewlyRequired(ctx, opts, cfg, store, pipe, inst, p)
			newDeps[p.Name] = newlyAdded{ns, added}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	}
	results, err := pipe.Update(ctx, req, inst.Prepare)
	byName := map[string]registry.UpdateResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	// A skill that did not move after all needs none of what was
	// installed for it.
	for name, a := range newDeps {
		if byName[name].Status != registry.StatusUpdated {
			dropUnneeded(ctx, store, errOut, a.graph, a.added, nil)
		}
	}
	for i, r := range plans {
		if u, ok := byName[r.Name]; ok {
			plans[i] = u
		} else if r.Status == registry.StatusWouldUpdate {
			plans[i].Status = registry.StatusDeclined
		}
	}
	printUpdates(opts.IO, plans, held)
	return errors.Join(lookErr, err)
}

// printUpdates writes one line per skill.
func printUpdates(io *IOStreams, results []registry.UpdateResult, held map[string]string) {
	for _, r := range results {
		if r.Status == registry.StatusWouldUpdate && len(r.LocalEdits) > 0 {
			fmt.Fprintf(io.ErrOut, "warning: %s has local edits that an update would discard: %s\n", r.Name, strings.Join(r.LocalEdits, ", "))
		}
		if r.Status == registry.StatusWouldUpdate && held[r.Name] != "" {
			r.Status = registry.StatusDeclined
		}
		fmt.Fprintf(io.Out, "%s: %s\n", r.Name, workspace.EscapeTerminal(describeResult(r)))
	}
}

// installNewlyRequired resolves and installs what p's new version
// requires that no installed skill provides, as add does: listed, audited
// before anything is written, trusted only with --trust-deps or for an
// accepted signer's signature.
func installNewlyRequired(ctx context.Context, opts *updateOptions, cfg *Config, store *registry.Store, pipe *registry.Pipeline, inst *install.Preparer, p registry.UpdatePlan) ([]deps.Node, []registry.Entry, error) {
	e, err := store.Get(p.Name)
	if err != nil {
		return nil, nil, err
	}
	progress := opts.IO.Progress()
	src := gitsrc.Recorded(e.URL)
	root := deps.Candidate{Name: e.Canonical, Version: p.NewVersion, Requires: p.Requires, Source: depKey(e.URL, e.Subdir)}
	ns, err := resolveFrom(ctx, store, pipe, progress, []deps.Candidate{root}, []manifest.Requirement{{Source: src.URL, Path: strings.Trim(e.Subdir, "/."), Constraint: "*"}})
	if err != nil {
		return nil, nil, err
	}
	writeDeps(opts.IO.ErrOut, ns, opts.TrustDeps)
	gate := newAuditGate(cfg, opts.IO.ErrOut, nil, "add it yourself with 'agent skill add' and --trust=%s to install it anyway")
	if err := auditDeps(ctx, pipe, progress, ns, gate); err != nil {
		return nil, nil, err
	}
	added, err := addDeps(ctx, pipe, ns, opts.TrustDeps, inst.Prepare, registry.AddRequest{AgentVersion: Version, Progress: progress, Warn: opts.IO.Warn})
	if err != nil {
		return ns, dropUnneeded(ctx, store, opts.IO.ErrOut, ns, added, nil), err
	}
	for _, a := range added {
		printInstalled(opts.IO.ErrOut, a)
	}
	return ns, added, gate.save(store.Home, added)
}

// describePlan renders "abc1234 → def5678 (1.0.0 → 1.1.0)".
func describePlan(p registry.UpdatePlan) string {
	s := shortSHA(p.OldSHA) + " → " + shortSHA(p.NewSHA)
	if p.OldVersion != "" || p.NewVersion != "" {
		s += " (" + versionOrDash(p.OldVersion) + " → " + versionOrDash(p.NewVersion) + ")"
	}
	return s
}

func describeResult(r registry.UpdateResult) string {
	switch r.Status {
	case registry.StatusUpToDate:
		return "already up to date at " + shortSHA(r.OldSHA)
	case registry.StatusPinned:
		return "pinned to " + shortSHA(r.OldSHA) + " (its ref is a tag or commit); remove and add it again to move it"
	case registry.StatusDeclined:
		return "not updated, still at " + shortSHA(r.OldSHA)
	case registry.StatusWouldUpdate:
		return "would update " + describePlan(r.UpdatePlan)
	case registry.StatusUpdated:
		return "updated " + describePlan(r.UpdatePlan)
	}
	return fmt.Sprintf("%v %s", r.Status, describePlan(r.UpdatePlan))
}
