package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/provenance"
)

type signOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)

	Skill string
	Key   string
}

func newCmdSign(f *Factory, runF func(context.Context, *signOptions) error) *cobra.Command {
	opts := &signOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "sign <name|oci://HOST/REPO:TAG> --key FILE",
		Short: "Sign a skill in an OCI registry with your key",
		Long: dedent(`
			Sign a skill artifact (what agent skill publish pushed) with an
			ed25519 or ECDSA private key: a Sigstore bundle (a DSSE envelope over
			an in-toto statement whose subject is the artifact's manifest
			digest, with the key's fingerprint as its public-key hint) is
			attached to the artifact in its registry as an OCI referrer. On a
			registry without the referrers API (distribution 2.8) it is listed
			in the index tagged sha256-<hex of the digest>, the OCI tag scheme.

			The key is a PEM PKCS#8 ("PRIVATE KEY") or EC key, or an unencrypted
			OpenSSH key (ssh-keygen -t ed25519). Those who install the skill
			accept your public key with agent skill trust --signer KEY.pub or
			signatures.signers in config.yaml; no network but the registry's is
			needed to check it, and no transparency log is written to.

			Git sources are signed with git itself (git commit -S, git tag -s,
			with an SSH or GPG key); agent checks those signatures too.

			Guide: docs/teams.md.
		`),
		Example: dedent(`
			$ agent skill publish ./weather oci://registry.internal/skills/weather:1.2.0
			$ agent skill sign oci://registry.internal/skills/weather:1.2.0 --key ~/.ssh/id_ed25519
		`),
		Args: exactArgs(1, "a skill: oci://HOST/REPO:TAG, oci://HOST/REPO@sha256:…, or the name of a skill installed from one"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			if opts.Key == "" {
				return usageErr(fmt.Errorf("give the private key to sign with: --key FILE"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return signRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "", "the ed25519 or ECDSA private key to sign with (PEM PKCS#8, EC, or OpenSSH)")
	return cmd
}

func signRun(ctx context.Context, opts *signOptions) error {
	key, err := os.ReadFile(opts.Key)
	if err != nil {
		return fmt.Errorf("read the key: %w", err)
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	s, err := provenance.New(store).Sign(ctx, provenance.SignRequest{Skill: opts.Skill, Key: key})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Signed %s with %s\n", s.Ref, s.Signer)
	fmt.Fprintf(opts.IO.Out, "%s@%s\n", s.Ref.Repo(), s.Referrer)
	return nil
}
