package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
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

// Why a skill is not active, as `agent check --json` reports it.
const (
	reasonNotSelected  = "not_in_agent_skills"
	reasonUntrusted    = "untrusted"
	reasonIncompatible = "incompatible"
	reasonLoadFailed   = "load_failed"
)

// skillState is one installed or bundled skill as check and prompt see it.
type skillState struct {
	Entry    registry.Entry
	Manifest *registry.Manifest // nil when SKILL.md did not load
	Active   bool
	Selected bool   // named by AGENT_SKILLS (or matched by all/all-untrusted)
	Reason   string // one of the reason constants when not active
	Detail   string // one line: why it failed to load or is incompatible
	Scripts  int
}

// skillView is every known skill with its state. Building it reads each
// skill's SKILL.md and lists (never reads) its scripts/ folder, so it is
// what Layer 1 may be built from.
type skillView struct {
	Spec     string // AGENT_SKILLS
	Skills   []skillState
	Warnings []string
}

// loadSkillView reads every known skill's SKILL.md: what check reports.
func (f *Factory) loadSkillView(ctx context.Context) (*skillView, error) {
	return f.skillView(ctx, true)
}

// loadActiveView reads only the SKILL.md of the skills AGENT_SKILLS selects:
// all that Layer 1 needs. The others keep a nil Manifest and no Reason.
func (f *Factory) loadActiveView(ctx context.Context) (*skillView, error) {
	return f.skillView(ctx, false)
}

// skillView builds the view. It starts no process and opens no file but
// registry.json and SKILL.md files.
func (f *Factory) skillView(ctx context.Context, everySkill bool) (*skillView, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	store, err := f.Store()
	if err != nil {
		return nil, err
	}
	all, err := allEntries(ctx, store)
	if err != nil {
		return nil, err
	}
	selected, warnings := registry.Select(all, cfg.Skills)
	isSelected := make(map[string]bool, len(selected))
	for _, e := range selected {
		isSelected[e.Canonical] = true
	}
	v := &skillView{Spec: cfg.Skills, Warnings: warnings}
	for _, e := range all {
		st := skillState{Entry: e, Selected: isSelected[e.Canonical]}
		if !st.Selected && !everySkill {
			v.Skills = append(v.Skills, st)
			continue
		}
		m, _, err := loadManifest(e)
		switch {
		case err != nil:
			st.Reason, st.Detail = reasonLoadFailed, oneLine(err, e.Path)
		case registry.CheckCompatibility(m, Version) != nil:
			st.Manifest = m
			st.Reason, st.Detail = reasonIncompatible, oneLine(registry.CheckCompatibility(m, Version), e.Path)
		default:
			st.Manifest = m
			switch {
			case st.Selected:
				st.Active = true
			case !e.Trusted && e.Source != registry.SourceBundled:
				st.Reason = reasonUntrusted
			default:
				st.Reason = reasonNotSelected
			}
		}
		if st.Manifest != nil {
			st.Scripts = countScripts(e.Path, st.Manifest)
		}
		v.Skills = append(v.Skills, st)
	}
	return v, nil
}

// oneLine is the first line of err, with the skill's own folder left out of
// paths so that the reason stays short.
func oneLine(err error, dir string) string {
	msg := err.Error()
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
	}
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// active returns the active skills in canonical order.
func (v *skillView) active() []skillState {
	var out []skillState
	for _, s := range v.Skills {
		if s.Active {
			out = append(out, s)
		}
	}
	return out
}

// countScripts counts a skill's runnable scripts from the directory listing
// alone, as the script plugin finds them: no script is opened.
func countScripts(dir string, m *registry.Manifest) int {
	if dir == "" {
		return 0
	}
	scripts, err := exec.List(dir, m.Scripts, m.ScriptsIgnore)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range scripts {
		if s.Err == nil {
			n++
		}
	}
	return n
}

// activateHint says how to turn on the skills that are off only because
// AGENT_SKILLS does not name them.
func activateHint(v *skillView) string {
	var names, off []string
	for _, s := range v.Skills {
		if s.Active {
			names = append(names, s.Entry.Canonical)
		}
		if s.Reason == reasonNotSelected {
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
