package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/trust"
)

type listOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)
	// Discovery finds the skills of .agents/skills folders (SPEC §6).
	Discovery func() workspace.Discovery

	JSON bool
}

func newCmdList(f *Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{IO: f.IO, Store: f.Store, Discovery: f.discovery}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List installed, bundled and discovered skills",
		Long: dedent(`
			List every installed skill, every skill bundled in the agent binary
			and every skill discovered in .agents/skills (the project's, then
			~/.agents/skills), with its version, the commit it is pinned to,
			whether you trust it, and where it came from. No installed or
			discovered skill takes a bundled skill's name, and a discovered
			skill never hides an installed one; a project skill hides a user
			skill of the same name (with a warning).

			--json prints an array of registry entries, sorted by canonical name.
		`),
		Example: dedent(`
			$ agent skill list
			$ agent skill list --json | jq -r '.[] | select(.trusted) | .name'
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func listRun(ctx context.Context, opts *listOptions) error {
	shortLived()
	store, err := opts.Store()
	if err != nil {
		return err
	}
	entries, warnings, err := workspace.AllEntries(ctx, trust.Of(store), opts.Discovery())
	if err != nil {
		return err
	}
	for _, w := range warnings {
		opts.IO.Warn(w)
	}
	if opts.JSON {
		if entries == nil {
			entries = []registry.Entry{}
		}
		return writeJSON(opts.IO.Out, entries)
	}
	if len(entries) == 0 {
		opts.IO.ErrOut.Write([]byte("No skills installed. Add one with 'agent skill add <git-url> --trust'.\n"))
		return nil
	}
	t := newTable(opts.IO.Out, "NAME", "VERSION", "SHA", "TRUSTED", "SOURCE")
	for _, e := range entries {
		t.row(e.Name, versionOrDash(e.Version), shortSHA(e.CommitSHA), yesNo(e.Trusted), entrySource(e))
	}
	return t.flush()
}

// entrySource is where a skill came from, as a person reads it.
func entrySource(e registry.Entry) string {
	if e.Source == "bundled" {
		return "bundled"
	}
	if e.Source == registry.SourceDev {
		return "dev: " + e.Path
	}
	if e.Source == registry.SourceDiscovered {
		return "discovered: " + e.Path
	}
	s := e.URL
	if e.Subdir != "" {
		s += " (" + e.Subdir + ")"
	}
	switch {
	case e.Constraint != "":
		s += "@" + e.Constraint
	case e.Ref != "":
		s += "@" + e.Ref
	}
	return s
}
