package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/registry"
)

type lockOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)

	Output string
}

func newCmdLock(f *Factory, runF func(context.Context, *lockOptions) error) *cobra.Command {
	opts := &lockOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "lock [-o FILE]",
		Short: "Write skills.lock: the installed skills pinned to commits and h1: hashes",
		Long: dedent(`
			Write the installed skills (not the bundled ones) to a lock file,
			skills.lock in the current folder unless -o names another: for each
			skill its canonical name, source URL, folder in the repository, the
			ref or version constraint it follows, the commit SHA, the h1: hash
			of its folder, its plugin's build path and whether it is trusted.

			The JSON is sorted and holds no timestamps, so locking an unchanged
			set rewrites the same bytes and a change diffs as one entry. Commit
			the lock next to your project; agent skill sync installs exactly it
			on another machine.

			Guide: docs/teams.md.
		`),
		Example: dedent(`
			$ agent skill lock
			$ agent skill lock -o ci/skills.lock
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return lockRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", registry.LockFileName, "write the lock to `FILE`")
	return cmd
}

func lockRun(_ context.Context, opts *lockOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	entries, err := store.List()
	if err != nil {
		return err
	}
	l, err := registry.NewLock(entries)
	if err != nil {
		return err
	}
	if err := registry.WriteLock(opts.Output, l); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Locked %d skill(s) in %s\n", len(l.Skills), opts.Output)
	return nil
}
