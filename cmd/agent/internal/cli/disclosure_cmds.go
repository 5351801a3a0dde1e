package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
)

// addDisclosureCommands registers check, prompt and skill show, and the
// hidden root flag --check (an alias of `agent check`).
func addDisclosureCommands(root, skill *cobra.Command, f *Factory) {
	check := holdsGC(newCmdCheck(f, nil))
	root.AddCommand(check, holdsGC(newCmdPrompt(f, nil)))
	skill.AddCommand(newCmdShow(f, nil))

	// `agent --check` runs `agent check`. The flags are local to the root
	// (not persistent) so that `agent tools --check` stays an error; --check
	// is in the help because people look for it there.
	root.Flags().Bool("check", false, "same as 'agent check': what is active and why a skill failed to load")
	root.Flags().Bool("json", false, "with --check: print JSON")
	_ = root.Flags().MarkHidden("json")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if on, _ := cmd.Flags().GetBool("check"); on {
			return noArgs(cmd, args)
		}
		// Giving the root a RunE turns off cobra's own check for
		// unknown subcommands; keep its wording (and exit code 2).
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
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
		opts := &checkOptions{IO: f.IO, View: f.loadSkillView, FindUV: f.findUV, JSON: asJSON}
		return checkRun(cmd.Context(), opts)
	}
}

// activateHint says how to turn on the skills that are off only because
// AGENT_SKILLS does not name them.
func activateHint(v *workspace.View) string {
	var names, off, bundledOff []string
	for _, s := range v.Skills {
		switch {
		case s.Active:
			names = append(names, s.Entry.Canonical)
		case s.Reason != workspace.ReasonNotSelected:
		// A named-only skill (base, a shell) is never suggested: giving
		// it to a model is a choice made by name.
		case s.Entry.NamedOnly:
		case s.Entry.Source == registry.SourceBundled:
			bundledOff = append(bundledOff, s.Entry.Canonical)
		default:
			off = append(off, s.Entry.Canonical)
		}
	}
	// Installed skills first: they are what the user added (and most
	// likely meant in a mistyped AGENT_SKILLS).
	off = append(off, bundledOff...)
	if len(off) == 0 {
		return ""
	}
	if len(names) == 0 && len(off) > 1 {
		return fmt.Sprintf("To enable: export AGENT_SKILLS=%s (or AGENT_SKILLS=all)", off[0])
	}
	return "To enable: export AGENT_SKILLS=" + strings.Join(append(names, off...), ",")
}
