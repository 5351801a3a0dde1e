package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/trust"
)

type showOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)
	// Discovery finds the skills of .agents/skills folders (SPEC §6).
	Discovery func() workspace.Discovery

	Name string
	Args []string
	JSON bool
}

func newCmdShow(f *Factory, runF func(context.Context, *showOptions) error) *cobra.Command {
	opts := &showOptions{IO: f.IO, Store: f.Store, Discovery: f.discovery}
	cmd := &cobra.Command{
		Use:   "show <name> [args...]",
		Short: "Print a skill's instructions with its arguments filled in (Layer 2)",
		Long: dedent(`
			Print the body of a skill's SKILL.md (everything after the front
			matter), as a model gets it from the use_skill tool, with the
			arguments substituted:

			  $ARGUMENTS      all arguments, joined by spaces
			  $ARGUMENTS[N]   argument N, counting from 0
			  $N              the same as $ARGUMENTS[N]; $10 is argument 10
			                  (write $ARGUMENTS[1]0 for argument 1 then "0")

			A missing argument is empty. Dollar amounts such as $5.00 or $1,000 are
			left alone; write \$1 for a literal $1. When the body has no
			placeholder and arguments are given, a line 'ARGUMENTS: ...' is
			appended.

			Any installed or bundled skill can be shown, active or not. A skill
			with user-invocable: false is meant for the model only and is refused
			here. Only SKILL.md is read: no script or reference file.
			--json may come anywhere; any other word after the name is an
			argument. After '--' every word is an argument, --json included.
		`),
		Example: dedent(`
			$ agent skill show skill-authoring "a weather skill"
			$ agent skill show --json pdf-report report.pdf 2024
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr(fmt.Errorf("%s needs a skill <name>; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.Args = showArgs(args[1:], &opts.JSON)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	// Not interspersed, so that arguments such as -5 reach the skill;
	// showArgs still finds --json after them.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the use_skill result as JSON")
	return cmd
}

// showArgs takes --json out of the arguments after the name (agent skill
// show NAME args --json), up to a '--', which it drops.
func showArgs(args []string, asJSON *bool) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		switch a {
		case "--":
			return append(out, args[i+1:]...)
		case "--json":
			*asJSON = true
		default:
			out = append(out, a)
		}
	}
	return out
}

func showRun(ctx context.Context, opts *showOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), opts.Name)
	if err != nil {
		return err
	}
	m, _, err := workspace.LoadManifest(e)
	if err != nil {
		return fmt.Errorf("show %s: %w", e.Canonical, err)
	}
	if err := disclosure.Check(e.Canonical, workspace.Triggers(m), disclosure.Person); err != nil {
		return err
	}
	r := workspace.Layer2(e, m, opts.Args)
	if opts.JSON {
		return writeJSON(opts.IO.Out, r)
	}
	if note := r.ForkNote(); note != "" {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s\n", note)
	}
	_, err = fmt.Fprint(opts.IO.Out, workspace.EscapeTerminal(r.Instructions))
	return err
}

func init() {
	hints = append(hints, hint{func(err error) bool { return errors.Is(err, disclosure.ErrNotUserInvocable) },
		"a model loads it with the use_skill tool ('agent call use_skill'); its author can remove user-invocable: false to allow people"})
}
