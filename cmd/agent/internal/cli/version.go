package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// Version is the semver that SKILL.md compatibility fields are checked against.
// Release builds may override it with -ldflags "-X ...cli.Version=x.y.z".
var Version = "0.1.0"

type versionOptions struct{ IO *IOStreams }

func newCmdVersion(f *Factory, runF func(context.Context, *versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agent version used for skill compatibility checks",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return versionRun(cmd.Context(), opts)
		},
	}
}

func versionRun(_ context.Context, opts *versionOptions) error {
	_, err := fmt.Fprintln(opts.IO.Out, Version)
	return err
}
