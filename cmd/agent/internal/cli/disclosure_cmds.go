package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/workspace"
)

// addDisclosureCommands registers check, prompt and skill show, and the
// hidden root flag --check (an alias of `agent check`).
func addDisclosureCommands(root, skill *cobra.Command, f *Factory) {
	check := newCmdCheck(f, nil)
	root.AddCommand(check, newCmdPrompt(f, nil))
	skill.AddCommand(newCmdShow(f, nil))

	// `agent --check` runs `agent check`. The flags are local to the root
	// (not persistent) so that `agent tools --check` stays an error, and
	// hidden so that help shows one way to do it.
	root.Flags().Bool("check", false, "same as 'agent check'")
	_ = root.Flags().MarkHidden("check")
	root.Flags().Bool("json", false, "with --check: print JSON")
	_ = root.Flags().MarkHidden("json")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if on, _ := cmd.Flags().GetBool("check"); on {
			return noArgs(cmd, args)
		}
		// Giving the root a RunE turns off cobra's own check for
		// unknown subcommands; keep its wording (and exit code 2).
		if len(args) > 0 {
			return usageErr(fmt.Errorf("unknown command %q for %q; see '%s --help'", args[0], cmd.CommandPath(), cmd.CommandPath()))
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if on, _ := cmd.Flags().GetBool("check"); !on {
			if cmd.Flags().Changed("json") {
				return usageErr(fmt.Errorf("--json needs a command, for example 'agent check --json'"))
			}
			return cmd.Help()
		}
		asJSON, _ := cmd.Flags().GetBool("json")
		opts := &checkOptions{IO: f.IO, View: f.loadSkillView, JSON: asJSON}
		return checkRun(cmd.Context(), opts)
	}
}

// activateHint says how to turn on the skills that are off only because
// AGENT_SKILLS does not name them.
func activateHint(v *workspace.View) string {
	var names, off []string
	for _, s := range v.Skills {
		if s.Active {
			names = append(names, s.Entry.Canonical)
		}
		// A named-only skill (base, a shell) is never suggested: giving
		// it to a model is a choice made by name.
		if s.Reason == workspace.ReasonNotSelected && !s.Entry.NamedOnly {
			off = append(off, s.Entry.Canonical)
		}
	}
	if len(off) == 0 {
		return ""
	}
	if len(names) == 0 && len(off) > 1 {
		return fmt.Sprintf("To enable: export AGENT_SKILLS=%s (or AGENT_SKILLS=all)", off[0])
	}
	return "To enable: export AGENT_SKILLS=" + strings.Join(append(names, off...), ",")
}
