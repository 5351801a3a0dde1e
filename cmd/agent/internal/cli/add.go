package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/registry"
)

type addOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*installer, error)

	Source  string
	Skill   string
	Name    string
	Ref     string
	Version string
	Trust   bool
	Yes     bool
}

func newCmdAdd(f *Factory, runF func(context.Context, *addOptions) error) *cobra.Command {
	opts := &addOptions{IO: f.IO, Store: f.Store, Installer: f.installer}
	cmd := &cobra.Command{
		Use:   "add <source> [skill]",
		Short: "Install a skill from git and pin it to a commit",
		Long: dedent(`
			Install a skill from a git repository and pin it to one commit.

			<source> is an https, http, ssh, git or file URL, a local path to a git
			repository, or owner/repo for GitHub. source@X is the same as
			--version X when X is a version constraint (^1.2, ">=1, <2", 1.x)
			and --ref X when it is a tag, branch or commit SHA.

			When the repository holds several skills (SKILL.md, */SKILL.md,
			skills/*/SKILL.md or plugins/*/skills/*/SKILL.md), name the one you
			want as [skill].

			The skill is cloned, validated, checked against this agent's version,
			its Go plugin is built with 'go build' and hashed, its tools are
			described, and only then is it registered. On any failure nothing is
			left behind.

			A skill runs code on your machine. --trust records that you trust it,
			so that AGENT_SKILLS=all activates it. Without --trust you are asked on
			a terminal; elsewhere pass --yes to install it untrusted.
		`),
		Example: dedent(`
			# the highest 1.x tag, trusted
			$ agent skill add https://github.com/acme/skills@^1 weather --trust

			# a branch, installed untrusted without asking
			$ agent skill add acme/skills --ref main --yes

			# a local repository under another name
			$ agent skill add ./my-skill --name my-skill-dev --trust
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr(fmt.Errorf("%s needs <source> and optionally [skill]; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if len(args) > 1 {
				opts.Skill = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "install under this `name` instead of the manifest's")
	cmd.Flags().StringVar(&opts.Ref, "ref", "", "check out this branch, tag or commit `SHA`")
	cmd.Flags().StringVar(&opts.Version, "version", "", "pick the highest tag matching this semver `constraint`")
	cmd.Flags().BoolVar(&opts.Trust, "trust", false, "trust the skill: AGENT_SKILLS=all will activate it")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask; without --trust the skill is installed untrusted")
	return cmd
}

// sourceFromArgs merges source@X with --ref and --version.
func sourceFromArgs(raw, ref, version string) (registry.Source, error) {
	if ref != "" && version != "" {
		return registry.Source{Raw: raw}, usageErr(fmt.Errorf("--ref and --version exclude each other: a ref names one commit, a constraint picks the highest matching tag"))
	}
	src, err := registry.ParseSource(raw)
	if err != nil {
		return src, err
	}
	if (ref != "" || version != "") && (src.Ref != "" || src.Constraint != "") {
		return src, usageErr(fmt.Errorf("%q already names a version after '@'; drop the @ part or the --ref/--version flag", raw))
	}
	if ref != "" {
		src.Ref = ref
	}
	if version != "" {
		src.Constraint = version
	}
	return src, nil
}

func addRun(ctx context.Context, opts *addOptions) error {
	shortLived()
	src, err := sourceFromArgs(opts.Source, opts.Ref, opts.Version)
	if err != nil {
		return err
	}
	if opts.Name != "" {
		if _, err := registry.Canonical(opts.Name); err != nil {
			return fmt.Errorf("--name: %w", err)
		}
	}
	if !opts.Trust && !opts.Yes {
		if !opts.IO.CanPrompt() {
			return fmt.Errorf("refusing to install untrusted skill from %s: %w", src.URL, errUntrustedNoTTY)
		}
		ok, err := confirm(opts.IO, fmt.Sprintf("Install untrusted skill from %s?", src.URL))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("install of %s: %w", src.URL, errCanceled)
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
	var progress io.Writer
	if opts.IO.StderrTTY {
		progress = opts.IO.ErrOut
	}
	e, err := store.Add(ctx, registry.AddRequest{
		Source:       src,
		Skill:        opts.Skill,
		Name:         opts.Name,
		Trusted:      opts.Trust,
		AgentVersion: Version,
		Progress:     progress,
	}, inst.prepare)
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	version := ""
	if e.Version != "" {
		version = " " + e.Version
	}
	fmt.Fprintf(w, "Installed %s%s (%s) from %s\n", e.Name, version, shortSHA(e.CommitSHA), e.GitURL)
	if len(e.Tools) > 0 {
		fmt.Fprintf(w, "  %d tool(s) from its plugin\n", len(e.Tools))
	}
	if e.Trusted {
		fmt.Fprintf(w, "  trusted: activate it with AGENT_SKILLS=all or AGENT_SKILLS=%s\n", e.Canonical)
	} else {
		fmt.Fprintf(w, "  untrusted: files only; no plugin is built and no script or plugin runs until you trust it with 'agent skill trust %s'\n", e.Canonical)
	}
	return nil
}

func versionOrDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}
