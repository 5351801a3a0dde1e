package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/plugins/base"
	"github.com/agentskills/agent/plugins/exec"
)

// builtinPlugins are the plugins served by the agent binary itself, so that
// installing one binary installs them all. The host starts them as
// `agent __plugin <name>`.
var builtinPlugins = map[string]func() int{
	"exec": exec.Main,
	"base": base.Main,
}

type pluginOptions struct {
	Name string
}

func newCmdPlugin(_ *Factory, runF func(context.Context, *pluginOptions) error) *cobra.Command {
	opts := &pluginOptions{}
	return &cobra.Command{
		Use:    "__plugin <name>",
		Short:  "Serve a built-in plugin (started by the host, not by people)",
		Hidden: true,
		Args:   exactArgs(1, "the <name> of a built-in plugin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return pluginRun(cmd.Context(), opts)
		},
	}
}

func pluginRun(_ context.Context, opts *pluginOptions) error {
	serve, ok := builtinPlugins[opts.Name]
	if !ok {
		return usageErr(fmt.Errorf("no built-in plugin named %q; this command is run by the agent host", opts.Name))
	}
	if serve() != 0 {
		return errSilent
	}
	return nil
}
