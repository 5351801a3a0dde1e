package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/registry"
)

type linkOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)

	Dir string
}

func newCmdLink(f *Factory, runF func(context.Context, *linkOptions) error) *cobra.Command {
	opts := &linkOptions{IO: f.IO, Store: f.Store, Installer: f.installer}
	cmd := &cobra.Command{
		Use:   "link <dir>",
		Short: "Install a skill folder you are writing, in place (a development install)",
		Long: dedent(`
			Register the skill folder <dir> in place, for its author: no clone, no
			pin and no hash check; it is trusted (it is your own folder) and shows
			as "dev" in 'agent skill list'.

			Its plugin is built now, and built again, with its tools described
			again, whenever a file in the folder changed since: the edit loop is
			edit, then call. Linking again rebuilds at once. 'agent skill remove'
			unregisters it and leaves the folder alone.

			Guide: docs/writing-skills.md.
		`),
		Example: dedent(`
			$ agent skill init greeter --plugin
			$ agent skill link ./greeter
			$ AGENT_SKILLS=greeter agent call greet '{"name":"Ada"}'
		`),
		Args: exactArgs(1, "the <dir> of a skill (the folder holding SKILL.md)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return linkRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func linkRun(ctx context.Context, opts *linkOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	inst, err := opts.Installer()
	if err != nil {
		return err
	}
	e, err := inst.Link(ctx, registry.NewPipeline(store), opts.Dir, Version, opts.IO.Warn)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Linked %s (dev) from %s\n", e.Name, e.Path)
	if len(e.Tools) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "  %d tool(s) from its plugin\n", len(e.Tools))
	}
	fmt.Fprintf(opts.IO.ErrOut, "  activate it with AGENT_SKILLS=%s; edits are rebuilt on the next call\n", e.Canonical)
	return nil
}

// relink is the workspace's Relink (install.Preparer.Relink).
func (f *Factory) relink(ctx context.Context, e registry.Entry) (registry.Entry, error) {
	store, err := f.Store()
	if err != nil {
		return e, err
	}
	inst, err := f.installer()
	if err != nil {
		return e, err
	}
	fresh, err := inst.Relink(ctx, registry.NewPipeline(store), e, Version)
	if errors.Is(err, plugbuild.ErrBuild) {
		err = workspace.BuildFailed(err)
	}
	return fresh, err
}
