package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
)

type toolsOptions struct {
	IO        *IOStreams
	Workspace func(context.Context) (*workspace.Workspace, error)

	JSON bool
}

func newCmdTools(f *Factory, runF func(context.Context, *toolsOptions) error) *cobra.Command {
	opts := &toolsOptions{IO: f.IO, Workspace: f.loadWorkspace}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of the active skills",
		Long: dedent(`
			List the tools a model can call in this process: the built-in use_skill,
			script_list, script_help and script_run (when an active skill has
			scripts), and the tools of every active skill's plugin.

			AGENT_SKILLS decides which skills are active: all (trusted and
			bundled skills), all-untrusted, or a comma-separated list of names.
			When two skills define the same tool, the first in name order keeps
			the bare name; call the other as skill.tool.

			No plugin is started: tools come from the registry's cache.
			--json adds each tool's input JSON schema.
		`),
		Example: dedent(`
			$ AGENT_SKILLS=all agent tools
			$ AGENT_SKILLS=weather agent tools --json | jq '.[].name'
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return toolsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON, with input schemas")
	return cmd
}

// toolJSON is one element of `agent tools --json`.
type toolJSON struct {
	Name        string          `json:"name"`
	Skill       string          `json:"skill"`
	Qualified   string          `json:"qualified"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Shadowed    bool            `json:"shadowed,omitempty"`
}

func toolsRun(ctx context.Context, opts *toolsOptions) error {
	shortLived()
	ws, err := opts.Workspace(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	ws.PrintWarnings(opts.IO.ErrOut)
	switch {
	case len(ws.Active) == 0 && len(ws.Failed) > 0:
		// AGENT_SKILLS named them: the advice to set it would be wrong.
		fmt.Fprintln(opts.IO.ErrOut, "No skills are active: the ones AGENT_SKILLS selects failed to load (the warnings above say why).")
	case len(ws.Active) == 0:
		fmt.Fprintln(opts.IO.ErrOut, noActiveSkillsHint)
	}
	if opts.JSON {
		out := make([]toolJSON, 0, len(ws.Tools))
		for _, t := range ws.Tools {
			out = append(out, toolJSON{
				Name: t.Name, Skill: t.Skill, Qualified: t.Qualified(),
				Description: t.Info.Description, InputSchema: t.Info.InputSchema, Shadowed: t.Shadowed,
			})
		}
		return writeJSON(opts.IO.Out, out)
	}
	if len(ws.Tools) == 0 {
		return nil
	}
	tw := newTable(opts.IO.Out, "NAME", "SKILL", "DESCRIPTION")
	for _, t := range ws.Tools {
		name := t.Name
		if t.Shadowed {
			name = t.Qualified()
		}
		tw.row(name, t.Skill, workspace.FirstLine(t.Info.Description, 100))
	}
	return tw.flush()
}

const noActiveSkillsHint = "No skills are active. Set AGENT_SKILLS=all for every trusted skill, or AGENT_SKILLS=<name,...>; 'agent skill list' shows what is installed."
