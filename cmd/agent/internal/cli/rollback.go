package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

type rollbackOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)
	Placer    placer
	// RegisterMCP registers `agent mcp` with a client when a skill with
	// Go tools becomes placed (see registerMCPForPlaced).
	RegisterMCP func(client string) (path string, wrote bool, err error)

	Name string
}

func newCmdRollback(f *Factory, runF func(context.Context, *rollbackOptions) error) *cobra.Command {
	opts := &rollbackOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, RegisterMCP: f.registerPlacedMCP}
	cmd := &cobra.Command{
		Use:   "rollback <name>",
		Short: "Return a skill to the commit it had before its last update",
		Long: dedent(`
			Return an installed skill to its previous commit (the one before its
			last update, sync or rollback). The commit is fetched by SHA and its
			folder must have the h1: hash recorded for it; a trusted skill's
			plugin is rebuilt and its tools described again. The swap is atomic:
			on any failure or interruption the skill stays where it was.

			A second rollback returns to where the first one started.
		`),
		Example: dedent(`
			$ agent skill update weather --yes
			$ agent skill rollback weather
		`),
		Args: exactArgs(1, "the <name> of an installed skill"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return rollbackRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func rollbackRun(ctx context.Context, opts *rollbackOptions) error {
	if _, err := manifest.Canonical(opts.Name); err != nil {
		return err
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
	p, err := registry.NewPipeline(store).Rollback(ctx, registry.RollbackRequest{
		Name:         opts.Name,
		AgentVersion: Version,
		Progress:     progress,
		Warn:         opts.IO.Warn,
	}, inst.Prepare)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "%s: rolled back %s\n", p.Name, workspace.EscapeTerminal(describePlan(p)))
	return nil
}
