package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/scaffold"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/registry/manifest"
)

type initOptions struct {
	IO   *IOStreams
	Home func() (string, error)

	Dir    string
	Plugin bool
	Script bool
}

func newCmdInit(f *Factory, runF func(context.Context, *initOptions) error) *cobra.Command {
	opts := &initOptions{IO: f.IO, Home: func() (string, error) {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		return cfg.Home, nil
	}}
	cmd := &cobra.Command{
		Use:   "init <dir> [--plugin] [--script]",
		Short: "Scaffold a new skill that validates, builds and installs as it is",
		Long: dedent(`
			Create <dir> (missing or empty) with a SKILL.md named after the folder.

			--plugin adds plugin/: a Go module of its own (go.mod, go.sum,
			main.go, main_test.go) that requires the agent SDK at the version
			this agent embeds, serving one tool, greet. The agent supplies the
			SDK when it builds the plugin, so only Go is needed.

			--script adds scripts/hello.py: a PEP 723 script that supports
			--help and --json, run through the script_run tool.

			With either, tests/<name>.yaml holds one passing case of each kind
			for 'agent skill test' (docs/testing-skills.md).

			Commit the folder to a git repository, then 'agent skill add' it,
			or 'agent skill link' it while you work on it.

			Guide: docs/writing-skills.md.
		`),
		Example: dedent(`
			$ agent skill init my-skill --plugin --script
			$ agent skill validate my-skill
			$ agent skill test my-skill
		`),
		Args: exactArgs(1, "the <dir> to create"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return initRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Plugin, "plugin", false, "add a Go plugin module (plugin/)")
	cmd.Flags().BoolVar(&opts.Script, "script", false, "add a PEP 723 script (scripts/hello.py)")
	return cmd
}

func initRun(_ context.Context, opts *initOptions) error {
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	name, err := manifest.Canonical(filepath.Base(abs))
	if err != nil {
		return fmt.Errorf("init %s: the folder name is the skill's name: %w", opts.Dir, err)
	}
	files, err := scaffold.Write(opts.Dir, scaffold.Options{Name: name, Plugin: opts.Plugin, Script: opts.Script})
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(opts.IO.Out, filepath.Join(opts.Dir, filepath.FromSlash(f)))
	}
	fmt.Fprintf(opts.IO.ErrOut, "Created skill %s in %s\n", name, opts.Dir)
	if opts.Plugin {
		// Serve the SDK to `go test` and gopls in the plugin folder too.
		home, err := opts.Home()
		if err == nil {
			err = sdkmod.WriteProxy(plugbuild.ProxyDir(home))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "plugin/go.mod requires %s %s, which this agent supplies when it builds the plugin.\n", sdkmod.SDKPath, sdkmod.Version())
		fmt.Fprintf(opts.IO.ErrOut, "To run go test or an editor in plugin/, let go find the SDK too:\n  export GOPROXY=file://%s,$(go env GOPROXY) GONOSUMDB=github.com/agentskills/agent\n", filepath.ToSlash(plugbuild.ProxyDir(home)))
	}
	return nil
}
