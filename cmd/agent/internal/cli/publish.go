package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/provenance"
)

type publishOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)

	Skill string
	Ref   string
}

func newCmdPublish(f *Factory, runF func(context.Context, *publishOptions) error) *cobra.Command {
	opts := &publishOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "publish <name|dir> oci://HOST/REPO[:TAG]",
		Short: "Push a skill to an OCI registry",
		Long: dedent(`
			Push a skill folder, or an installed skill whose files are unchanged,
			to an OCI registry as one artifact (artifactType
			application/vnd.agentskills.skill.v1: a config with the name, version
			and h1: hash, and one layer per file). The digest is printed; others
			install it with agent skill add oci://HOST/REPO:TAG or
			oci://HOST/REPO@sha256:….

			Without a tag, SKILL.md's version is the tag. OCI tags cannot hold
			'+', so semver build metadata is written with '_' (1.2.0+build.5 is
			tagged 1.2.0_build.5) and read back as '+'.

			Credentials come from the Docker configuration (docker login);
			plain HTTP is used only for a registry on this machine (localhost,
			127.0.0.1, ::1).

			Guide: docs/teams.md.
		`),
		Example: dedent(`
			$ agent skill publish ./weather oci://ghcr.io/acme/skills/weather:1.2.0
			$ agent skill publish weather oci://localhost:5000/weather
		`),
		Args: exactArgs(2, "a skill (<name> or <dir>) and oci://HOST/REPO[:TAG]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill, opts.Ref = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return publishRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func publishRun(ctx context.Context, opts *publishOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	p, err := provenance.New(store).Publish(ctx, provenance.PublishRequest{Skill: opts.Skill, Ref: opts.Ref})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Published %s %s (%s) to %s:%s\n", p.Name, p.Version, p.H1, p.Ref.Repo(), p.Ref.Tag)
	fmt.Fprintf(opts.IO.Out, "%s@%s\n", p.Ref.Repo(), p.Ref.Digest)
	return nil
}
