package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
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

	Names  []string
	All    bool
	Yes    bool
	DryRun bool
}

func newCmdUpdate(f *Factory, runF func(context.Context, *updateOptions) error) *cobra.Command {
	opts := &updateOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, RegisterMCP: f.registerPlacedMCP}
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
	// The graph moves within its constraints: a skill whose new version an
	// installed skill's agent.requires refuses stays where it is.
	edges, _ := registry.Dependencies(before)
	results, err := registry.NewPipeline(store).Update(ctx, registry.UpdateRequest{
		Names:        opts.Names,
		All:          opts.All,
		DryRun:       opts.DryRun,
		AgentVersion: Version,
		Progress:     progress,
		Warn:         opts.IO.Warn,
		Confirm: func(p registry.UpdatePlan) (bool, error) {
			if why := outsideConstraints(edges, p); why != "" {
				fmt.Fprintf(errOut, "%s: held at %s: %s\n", p.Name, versionOrDash(p.OldVersion), why)
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
			if opts.Yes {
				return true, nil
			}
			if !opts.IO.CanPrompt() {
				return false, errUpdateNoTTY
			}
			return confirm(opts.IO, fmt.Sprintf("Update %s?", p.Name))
		},
	}, inst.Prepare)
	if len(results) == 0 && err == nil {
		fmt.Fprintln(errOut, "No skills installed from git; nothing to update.")
	}
	for _, r := range results {
		if r.Status == registry.StatusWouldUpdate && len(r.LocalEdits) > 0 {
			fmt.Fprintf(errOut, "warning: %s has local edits that an update would discard: %s\n", r.Name, strings.Join(r.LocalEdits, ", "))
		}
		fmt.Fprintf(opts.IO.Out, "%s: %s\n", r.Name, workspace.EscapeTerminal(describeResult(r)))
	}
	return err
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

// outsideConstraints says which installed skill's agent.requires refuses
// p's new version; "" when none does.
func outsideConstraints(edges []deps.Edge, p registry.UpdatePlan) string {
	for _, e := range edges {
		if e.To != p.Name || e.Req.Constraint == "*" {
			continue
		}
		c, err := semver.NewConstraint(e.Req.Constraint)
		v, verr := semver.NewVersion(p.NewVersion)
		if err == nil && (verr != nil || !c.Check(v)) {
			return fmt.Sprintf("%s requires %s@%s, and the new version is %s", e.From, p.Name, e.Req.Constraint, versionOrDash(p.NewVersion))
		}
	}
	return ""
}
