package cli

import (
	"context"
	"fmt"
	"github.com/agentskills/agent/registry/manifest"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/isolation/procgroup"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
)

type checkOptions struct {
	IO   *IOStreams
	View func(context.Context) (*workspace.View, error)
	// FindUV locates uv as script_run would; nil skips the uv hint.
	FindUV func() (path, why string)

	JSON bool
}

func newCmdCheck(f *Factory, runF func(context.Context, *checkOptions) error) *cobra.Command {
	opts := &checkOptions{IO: f.IO, View: f.loadSkillView, FindUV: f.findUV}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Show which skills are active, and why the others are not",
		Long: dedent(`
			List every installed and bundled skill with its state: active, or
			inactive and why (not in AGENT_SKILLS, untrusted, incompatible with
			this agent version, or SKILL.md failed to load), how many scripts and
			plugin tools it has, the commit it is pinned to and whether it is
			trusted. Then each load failure with its reason, and a hint on how to
			enable the skills that are off.

			Nothing is started and no script is read. The exit status is 1 when a
			skill that AGENT_SKILLS selects cannot be used (it failed to load or
			is incompatible), so check works as a health check. 'agent --check'
			is the same command.

			Guide: docs/security.md.
		`),
		Example: dedent(`
			$ AGENT_SKILLS=all agent check
			$ agent check --json | jq '.skills[] | select(.active)'
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// checkSkillJSON is one skill of `agent check --json`.
type checkSkillJSON struct {
	Name      string `json:"name"`
	Canonical string `json:"canonical"`
	Source    string `json:"source"`
	Active    bool   `json:"active"`
	Reason    string `json:"reason,omitempty"` // not_in_agent_skills, untrusted, incompatible, load_failed, missing_dependency
	Detail    string `json:"detail,omitempty"`
	// RequiredBy are the skills AGENT_SKILLS named that activated this
	// one as their dependency.
	RequiredBy []string `json:"required_by,omitempty"`
	Scripts    int      `json:"scripts"`
	Tools      int      `json:"tools"`
	CommitSHA  string   `json:"commit_sha,omitempty"`
	Trusted    bool     `json:"trusted"`
	Version    string   `json:"version,omitempty"`
	// Invocable says who may invoke an active skill: "both", "person"
	// (disable-model-invocation) or "model" (user-invocable: false).
	Invocable string `json:"invocable,omitempty"`
	// Sandbox says, for a skill whose code runs (scripts or tools), what
	// its code may reach here and what of that this machine enforces.
	Sandbox string `json:"sandbox,omitempty"`
}

type checkFailureJSON struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	// Output is the rest of the error, such as go build's compiler
	// output for a linked skill whose plugin no longer builds.
	Output string `json:"output,omitempty"`
}

// checkProtections says how plugins are kept honest and contained on this
// machine (SPEC §8 "Other systems"): they differ by platform.
type checkProtections struct {
	Launch      string `json:"launch"`
	Containment string `json:"containment"`
	// Sandbox says what confines skill code here, and what is not
	// sandboxed on this kernel (SPEC §8).
	Sandbox string `json:"sandbox"`
}

type checkJSON struct {
	AgentVersion string             `json:"agent_version"`
	Platform     string             `json:"platform"`
	Protections  checkProtections   `json:"protections"`
	AgentSkills  string             `json:"agent_skills"`
	Skills       []checkSkillJSON   `json:"skills"`
	Failures     []checkFailureJSON `json:"failures"`
	Warnings     []string           `json:"warnings"`
	Hints        []string           `json:"hints"`
}

func checkRun(ctx context.Context, opts *checkOptions) error {
	v, err := opts.View(ctx)
	if err != nil {
		return err
	}
	report := buildCheck(v)
	if h := uvHint(v, opts.FindUV); h != "" {
		report.Hints = append(report.Hints, h)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, report); err != nil {
			return err
		}
	} else {
		for _, w := range report.Warnings {
			opts.IO.Warn(w)
		}
		if err := writeCheck(opts.IO.Out, report); err != nil {
			return err
		}
	}
	for _, s := range v.Skills {
		if s.Selected && (s.Reason == workspace.ReasonLoadFailed || s.Reason == workspace.ReasonIncompatible) {
			return errSilent
		}
	}
	return nil
}

func buildCheck(v *workspace.View) checkJSON {
	r := checkJSON{
		AgentVersion: Version,
		Platform:     platformName(),
		Protections:  checkProtections{Launch: workspace.Launch(), Containment: strings.Join(procgroup.Protections(), ", "), Sandbox: sandboxLine()},
		AgentSkills:  v.Spec,
		Skills:       []checkSkillJSON{},
		Failures:     []checkFailureJSON{},
		Warnings:     append([]string{}, v.Warnings...),
		Hints:        []string{},
	}
	installed, activeInstalled, untrusted := 0, 0, []string{}
	for _, s := range v.Skills {
		e := s.Entry
		version := e.Version
		if version == "" && s.Manifest != nil {
			version = s.Manifest.Version
		}
		invocable := ""
		if s.Manifest != nil {
			t := workspace.Triggers(s.Manifest)
			switch {
			case t.DisableModelInvocation && !t.UserInvocable:
				invocable = "none"
			case t.DisableModelInvocation:
				invocable = "person"
			case !t.UserInvocable:
				invocable = "model"
			default:
				invocable = "both"
			}
		}
		box := ""
		if s.Manifest != nil && (s.Scripts > 0 || len(e.Tools) > 0) && e.Source != registry.SourceBundled {
			box = skillSandbox(s.Manifest.Permissions, sandbox.Probe())
		}
		r.Skills = append(r.Skills, checkSkillJSON{
			Sandbox:   box,
			Invocable: invocable,
			Name:      e.Name, Canonical: e.Canonical, Source: e.Source,
			Active: s.Active, Reason: s.Reason, Detail: s.Detail, RequiredBy: s.RequiredBy,
			Scripts: s.Scripts, Tools: len(e.Tools),
			CommitSHA: e.CommitSHA, Trusted: e.Trusted || e.Source == registry.SourceBundled,
			Version: version,
		})
		for _, p := range s.Problems {
			r.Warnings = append(r.Warnings, fmt.Sprintf("skill %s: %s", e.Canonical, p))
		}
		if s.Reason == workspace.ReasonLoadFailed || s.Reason == workspace.ReasonIncompatible {
			r.Failures = append(r.Failures, checkFailureJSON{Name: e.Canonical, Reason: s.Detail, Output: s.Output})
		}
		if e.Source != registry.SourceBundled {
			installed++
			if s.Active {
				activeInstalled++
			}
			if s.Reason == workspace.ReasonUntrusted {
				untrusted = append(untrusted, e.Canonical)
			}
		}
	}
	switch strings.ToLower(strings.TrimSpace(v.Spec)) {
	case "", "none":
		r.Hints = append(r.Hints, "No skills are active because AGENT_SKILLS is not set (or is none).")
	case "all":
		if activeInstalled == 0 {
			if installed == 0 {
				r.Warnings = append(r.Warnings, "AGENT_SKILLS=all found no installed skill, only the bundled ones; install one with 'agent skill add <source> --trust'")
			} else {
				r.Warnings = append(r.Warnings, fmt.Sprintf("AGENT_SKILLS=all found no trusted skill among the %d installed; trust one with 'agent skill trust <name>', or use AGENT_SKILLS=all-untrusted", installed))
			}
		}
	}
	// A selected skill that failed needs its fix, not the advice to
	// enable some other skill.
	failedSelected := false
	for _, s := range v.Skills {
		if s.Selected && (s.Reason == workspace.ReasonLoadFailed || s.Reason == workspace.ReasonIncompatible) {
			failedSelected = true
			if s.Code == workspace.CodePluginBuildFailed {
				r.Hints = append(r.Hints, fmt.Sprintf("Fix the compile errors of %s shown above: a linked skill is rebuilt on its next use, and 'agent check' tries again.", s.Entry.Canonical))
			}
		}
	}
	if h := activateHint(v); h != "" && !failedSelected {
		r.Hints = append(r.Hints, h)
	}
	if len(untrusted) > 0 {
		r.Hints = append(r.Hints, "To trust: agent skill trust "+untrusted[0]+" (then name it in AGENT_SKILLS, or use AGENT_SKILLS=all)")
	}
	return r
}

// uvHint says, once, how to install uv when a skill has scripts and uv is
// missing; script_run results only point here.
func uvHint(v *workspace.View, find func() (string, string)) string {
	if find == nil {
		return ""
	}
	scripts := false
	for _, s := range v.Skills {
		scripts = scripts || s.Scripts > 0
	}
	if !scripts {
		return ""
	}
	if _, why := find(); why != "" {
		return fmt.Sprintf("uv: %s, so scripts without dependencies run with python3 and scripts with dependencies fail; %s.", why, exec.InstallUV)
	}
	return ""
}

func writeCheck(w io.Writer, r checkJSON) error {
	spec := r.AgentSkills
	if spec == "" {
		spec = "(not set)"
	}
	fmt.Fprintf(w, "agent %s, AGENT_SKILLS=%s\n\n", r.AgentVersion, spec)
	t := newTable(w, "SKILL", "STATUS", "SCRIPTS", "TOOLS", "SHA", "TRUST")
	for _, s := range r.Skills {
		status := "active"
		switch s.Invocable {
		case "person":
			status = "active (person only)"
		case "model":
			status = "active (model only)"
		case "none":
			status = "active (nobody may invoke)"
		}
		switch s.Reason {
		case workspace.ReasonNotSelected:
			status = "off: not in AGENT_SKILLS"
		case workspace.ReasonUntrusted:
			status = "off: untrusted"
		case workspace.ReasonIncompatible:
			status = "off: incompatible version"
		case workspace.ReasonLoadFailed:
			status = "off: load failed"
		case workspace.ReasonDependency:
			status = "off: " + s.Detail
		}
		if s.Active && len(s.RequiredBy) > 0 {
			status += " (required by " + strings.Join(s.RequiredBy, ", ") + ")"
		}
		trust := "untrusted"
		switch {
		case s.Source == registry.SourceBundled:
			trust = "bundled"
		case s.Trusted:
			trust = "trusted"
		}
		t.row(s.Canonical, status, strconv.Itoa(s.Scripts), strconv.Itoa(s.Tools), shortSHA(s.CommitSHA), trust)
	}
	if err := t.flush(); err != nil {
		return err
	}
	first := true
	for _, s := range r.Skills {
		if s.Sandbox == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nSandbox per skill:")
			first = false
		}
		fmt.Fprintln(w, workspace.EscapeTerminal(fmt.Sprintf("  %s: %s", s.Canonical, s.Sandbox)))
	}
	if len(r.Failures) > 0 {
		fmt.Fprintln(w, "\nCould not load:")
		for _, f := range r.Failures {
			fmt.Fprintf(w, "  %s: %s\n", f.Name, workspace.EscapeTerminal(f.Reason))
			if f.Output != "" {
				fmt.Fprintln(w, workspace.EscapeTerminal(f.Output))
			}
		}
	}
	fmt.Fprintf(w, "\nProtections on this machine (%s):\n", r.Platform)
	fmt.Fprintf(w, "  launch: %s\n", r.Protections.Launch)
	fmt.Fprintf(w, "  containment: %s\n", r.Protections.Containment)
	fmt.Fprintf(w, "  sandbox: %s\n", r.Protections.Sandbox)
	if len(r.Hints) > 0 {
		fmt.Fprintln(w)
		for _, h := range r.Hints {
			fmt.Fprintln(w, h)
		}
	}
	return nil
}

// skillSandbox says what one skill's code may reach (its SKILL.md
// permissions) and what of that st enforces here.
func skillSandbox(p manifest.Permissions, st sandbox.Status) string {
	var parts []string
	if st.NS {
		parts = append(parts, "own namespaces, no capabilities")
	} else {
		parts = append(parts, "fallback: the host's processes visible, no capabilities")
	}
	switch {
	case slices.Contains(p.Network, "*"):
		parts = append(parts, "network: the host's (network: *)")
	case len(p.Network) > 0 && st.NetNS:
		parts = append(parts, "network: only "+strings.Join(p.Network, ", ")+" through the proxy")
	case len(p.Network) > 0:
		parts = append(parts, "network: "+strings.Join(p.Network, ", ")+" declared, but NOT enforced here (no network namespace: Landlock denies TCP, not UDP)")
	case st.NetNS:
		parts = append(parts, "network: none")
	default:
		parts = append(parts, "network: NOT sandboxed here but for Landlock's TCP rules")
	}
	files := "files: its folder"
	if st.ABI == 0 {
		files = "files: NOT sandboxed here (no Landlock)"
	} else {
		if len(p.FS.Read) > 0 {
			files += "; reads " + strings.Join(p.FS.Read, ", ")
		}
		if len(p.FS.Write) > 0 {
			files += "; writes " + strings.Join(p.FS.Write, ", ")
		}
	}
	parts = append(parts, files)
	if len(p.Env) > 0 {
		parts = append(parts, "env: "+strings.Join(p.Env, ", "))
	}
	return strings.Join(parts, "; ")
}

// sandboxLine says what confines scripts, base commands and plugins on
// this machine, in which mode (namespaces or the fallback, as far as it
// can tell without starting a process: the first sandboxed start
// confirms it), and what the kernel leaves unsandboxed.
func sandboxLine() string {
	st := sandbox.Probe()
	var parts []string
	if st.NS {
		parts = append(parts, "namespaces (user, PID, mount, IPC, UTS, network; a private /proc)")
	} else {
		parts = append(parts, "fallback without namespaces")
	}
	parts = append(parts, "no capabilities, no_new_privs")
	if st.ABI > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d", st.ABI))
	}
	if st.NetNS {
		parts = append(parts, "declared hosts through a proxy")
	}
	if st.Seccomp {
		parts = append(parts, "seccomp (Docker's default denials; no pathname Unix sockets without network)")
	}
	if os.Geteuid() == 0 {
		parts = append(parts, "as root: sandboxed code runs as uid 0 without capabilities, so only Landlock keeps it from root's files")
	}
	for _, l := range st.Lines() {
		parts = append(parts, "not sandboxed: "+l)
	}
	return strings.Join(parts, "; ")
}
