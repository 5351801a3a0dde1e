package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/placement"
)

type agentsOptions struct {
	IO  *IOStreams
	Env func() (placement.Env, error)

	JSON bool
}

func newCmdAgents(f *Factory, runF func(context.Context, *agentsOptions) error) *cobra.Command {
	opts := &agentsOptions{IO: f.IO, Env: f.placementEnv}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agents whose skill folders add --agent can place skills in",
		Long: dedent(`
			List the agents 'agent skill add --agent NAME' knows: every skill
			folder each one reads in a project and for the user (~), and whether
			it is detected here. A skill is placed in the first folder of the
			agent's list, unless another agent named with it reads a folder the
			first one reads too: then one copy serves both, so that no agent sees
			a skill twice. Folders in brackets (+...) the agent reads for
			compatibility with other agents: a copy there does not stand in for
			one in its own folder.

			Guide: docs/mcp.md.
		`),
		Example: dedent(`
			$ agent skill agents
			$ agent skill add acme/skills weather --trust --agent detected
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return agentsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

type agentJSON struct {
	placement.Agent
	Detected bool `json:"detected"`
}

func agentsRun(_ context.Context, opts *agentsOptions) error {
	env, err := opts.Env()
	if err != nil {
		return err
	}
	var out []agentJSON
	for _, a := range placement.Agents() {
		out = append(out, agentJSON{Agent: a, Detected: env.Detected(a)})
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	t := newTable(opts.IO.Out, "AGENT", "PROJECT FOLDERS", "USER FOLDERS", "DETECTED")
	for _, a := range out {
		det := "-"
		if a.Detected {
			det = "yes"
		}
		name := a.Name
		if a.Unverified {
			name += " *"
		}
		t.row(name, folderList(a.Project, a.ProjectAlso), folderList(a.User, a.UserAlso), det)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "* unverified: the folders npx skills uses, not yet checked against the agent's documentation\n")
	fmt.Fprintf(opts.IO.ErrOut, "Place a skill with 'agent skill add <source> --agent NAME[,NAME...]' (--global for the user folders)\n")
	return nil
}

// folderList shows an agent's own folders, then in brackets those it reads
// for compatibility.
func folderList(own, also []string) string {
	s := strings.Join(own, " ")
	if len(also) > 0 {
		s += " (+" + strings.Join(also, " ") + ")"
	}
	return s
}
