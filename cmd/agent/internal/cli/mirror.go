package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/provenance"
)

type mirrorOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)

	File   string
	Prefix string
}

func newCmdMirror(f *Factory, runF func(context.Context, *mirrorOptions) error) *cobra.Command {
	opts := &mirrorOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "mirror <lock> oci://HOST/PREFIX",
		Short: "Copy the git skills of a lock to an OCI mirror",
		Long: dedent(`
			Fetch each git skill of a lock file at its locked commit, check its
			folder against the locked h1: hash, and push it under
			oci://HOST/PREFIX/<git host and path>/<skill folder>:<commit>. A sync
			with --mirror oci://HOST/PREFIX (or mirrors: in config.yaml) then
			installs the same bytes without reaching the git host: for CI fleets
			and offline teams. Skills whose source is already oci:// are left
			where they are.

			Guide: docs/teams.md.
		`),
		Example: dedent(`
			$ agent skill mirror skills.lock oci://registry.internal/agent-mirror
			$ agent skill sync --mirror oci://registry.internal/agent-mirror --frozen
		`),
		Args: exactArgs(2, "a lock file and oci://HOST/PREFIX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.Prefix = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mirrorRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func mirrorRun(ctx context.Context, opts *mirrorOptions) error {
	if err := (registry.Mirror{OCI: opts.Prefix}).Check(); err != nil {
		return usageErr(err)
	}
	l, err := registry.ReadLock(opts.File)
	if err != nil {
		return err
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	res, err := provenance.New(store).FillMirror(ctx, l, opts.Prefix, opts.IO.Progress())
	for _, r := range res {
		if r.Skipped != "" {
			fmt.Fprintf(opts.IO.ErrOut, "%s: skipped: %s\n", r.Name, r.Skipped)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s\t%s\n", r.Name, r.Ref)
	}
	return err
}
