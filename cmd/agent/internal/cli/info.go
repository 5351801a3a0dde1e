package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/audit"
	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/ground/jsontext"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

type infoOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)
	// Discovery finds the skills of .agents/skills folders (SPEC §6).
	Discovery func() workspace.Discovery

	Name string
	JSON bool
}

func newCmdInfo(f *Factory, runF func(context.Context, *infoOptions) error) *cobra.Command {
	opts := &infoOptions{IO: f.IO, Store: f.Store, Discovery: f.discovery}
	cmd := &cobra.Command{
		Use:   "info <name>",
		Short: "Show everything about one skill: source, pin, manifest, scripts, tools",
		Long: dedent(`
			Show one installed or bundled skill: where it came from and the commit
			it is pinned to, whether you trust it, its SKILL.md fields (including
			the Claude Code ones), its scripts with their PEP 723 requirements,
			the tools its plugin described at install, and any warnings.

			Nothing is started: the tools are the ones cached in the registry.
		`),
		Example: dedent(`
			$ agent skill info weather
			$ agent skill info weather --json | jq .scripts
		`),
		Args: exactArgs(1, "the <name> of an installed skill"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return infoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// infoScript is one script in `info --json`, with its PEP 723 metadata.
type infoScript struct {
	Name           string   `json:"name"`
	Path           string   `json:"path"`
	RequiresPython string   `json:"requires_python,omitempty"`
	Dependencies   []string `json:"dependencies,omitempty"`
	Error          string   `json:"error,omitempty"`
}

func newInfoScript(s exec.Script) infoScript {
	out := infoScript{Name: s.Name, Path: s.Path}
	if s.Meta != nil {
		out.RequiresPython, out.Dependencies = s.Meta.RequiresPython, s.Meta.Dependencies
	}
	if s.Err != nil {
		out.Error = s.Err.Error()
	}
	return out
}

// skillInfo is what `info --json` prints: the registry entry, plus what is
// read from the skill's folder.
type skillInfo struct {
	registry.Entry
	Manifest *manifest.Manifest `json:"manifest,omitempty"`
	Scripts  []infoScript       `json:"scripts"`
	Warnings []string           `json:"warnings"`
	// Audit is the last audit recorded (agent skill audit, add, trust).
	Audit *audit.Report `json:"audit,omitempty"`
}

// MarshalJSON writes the entry's fields, then info's own: Entry has a
// MarshalJSON of its own (registry.json's order), which an embedding
// struct would otherwise inherit, dropping manifest, scripts and warnings.
func (i skillInfo) MarshalJSON() ([]byte, error) {
	entry, err := jsontext.Marshal(i.Entry)
	if err != nil {
		return nil, err
	}
	more, err := jsontext.Marshal(struct {
		Manifest *manifest.Manifest `json:"manifest,omitempty"`
		Scripts  []infoScript       `json:"scripts"`
		Warnings []string           `json:"warnings"`
		Audit    *audit.Report      `json:"audit,omitempty"`
	}{i.Manifest, i.Scripts, i.Warnings, i.Audit})
	if err != nil {
		return nil, err
	}
	// Both are objects: join their members.
	return append(append(entry[:len(entry)-1:len(entry)-1], ','), more[1:]...), nil
}

func infoRun(ctx context.Context, opts *infoOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), opts.Name)
	if err != nil {
		return err
	}
	info := skillInfo{Entry: e, Scripts: []infoScript{}, Warnings: []string{}}
	m, problems, err := workspace.LoadManifest(e)
	if err != nil {
		info.Warnings = append(info.Warnings, "SKILL.md: "+err.Error())
	}
	info.Manifest = m
	for _, p := range problems {
		info.Warnings = append(info.Warnings, p.String())
	}
	if m != nil && e.Path != "" && workspace.DirExists(e.Path) {
		scripts, err := exec.Discover(e.Path, m.Scripts, m.ScriptsIgnore)
		if err != nil {
			info.Warnings = append(info.Warnings, "scripts: "+err.Error())
		}
		for _, s := range scripts {
			info.Scripts = append(info.Scripts, newInfoScript(s))
		}
	}
	if info.Tools == nil {
		info.Tools = []registry.Tool{}
	}
	if info.Audit, err = audit.Last(store.Home, e.Canonical); err != nil {
		info.Warnings = append(info.Warnings, err.Error())
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, info)
	}
	return printInfo(opts.IO, info)
}

func printInfo(ios *IOStreams, info skillInfo) error {
	w := ios.Out
	e, m := info.Entry, info.Manifest
	kv := newTable(w)
	kv.row("name:", e.Name)
	if m != nil {
		kv.row("description:", workspace.FirstLine(m.Description, 0))
	} else if e.Description != "" {
		kv.row("description:", workspace.FirstLine(e.Description, 0))
	}
	kv.row("version:", versionOrDash(e.Version))
	kv.row("source:", entrySource(e))
	if e.Source != "bundled" && e.Source != registry.SourceDiscovered {
		kv.row("commit:", e.CommitSHA)
		if e.PreviousSHA != "" {
			kv.row("previous commit:", e.PreviousSHA)
		}
	}
	if e.Trusted || e.Source == "bundled" {
		kv.row("trusted:", "yes")
	} else {
		kv.row("trusted:", "no (files only: no plugin built, no script run; 'agent skill trust "+e.Canonical+"')")
	}
	if e.Signer != "" {
		kv.row("signed by:", e.Signer)
	}
	if e.DirHash != "" && e.Source == registry.SourceDiscovered {
		kv.row("files hash:", e.DirHash+" (when trusted)")
	} else if e.DirHash != "" {
		kv.row("files hash:", e.DirHash)
	}
	if !e.InstalledAt.IsZero() {
		kv.row("installed:", e.InstalledAt.Format(time.RFC3339))
	}
	if !e.UpdatedAt.IsZero() && !e.UpdatedAt.Equal(e.InstalledAt) {
		kv.row("updated:", e.UpdatedAt.Format(time.RFC3339))
	}
	if e.Path != "" {
		kv.row("path:", e.Path)
	}
	if a := info.Audit; a != nil {
		kv.row("audit:", fmt.Sprintf("%s (%s, rules %s %s)", a.Summary(), a.At.Format(time.RFC3339), a.Pack.Name, a.Pack.Version))
	} else if e.Source != registry.SourceBundled {
		kv.row("audit:", "none recorded: 'agent skill audit "+e.Canonical+"'")
	}
	if e.Plugin != nil {
		kv.row("plugin:", e.Plugin.Path)
		kv.row("plugin sha256:", e.Plugin.SHA256)
	}
	if m != nil {
		for _, f := range manifestFields(m) {
			kv.row(f[0]+":", f[1])
		}
	}
	if err := kv.flush(); err != nil {
		return err
	}

	if len(e.Tools) > 0 {
		fmt.Fprintln(w, "\ntools:")
		t := newTable(w)
		for _, tool := range e.Tools {
			t.row("  "+tool.Name, workspace.FirstLine(tool.Description, 80))
		}
		t.flush()
	}
	if len(info.Scripts) > 0 {
		fmt.Fprintln(w, "\nscripts:")
		t := newTable(w)
		for _, s := range info.Scripts {
			var req []string
			if s.RequiresPython != "" {
				req = append(req, "requires-python "+s.RequiresPython)
			}
			if len(s.Dependencies) > 0 {
				req = append(req, "dependencies: "+strings.Join(s.Dependencies, ", "))
			}
			if s.Error != "" {
				req = append(req, "error: "+s.Error)
			}
			t.row("  "+s.Name, s.Path, strings.Join(req, "; "))
		}
		t.flush()
	}
	if placed := placedCopies(e); len(placed) > 0 {
		fmt.Fprintf(w, "\nplaced (read-only copies; 'agent skill remove %s' removes them with the install):\n", e.Canonical)
		t := newTable(w)
		for _, p := range placed {
			t.row("  "+p[0], p[1])
		}
		t.flush()
	}
	if len(info.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, msg := range info.Warnings {
			fmt.Fprintf(w, "  %s\n", workspace.EscapeTerminal(msg))
		}
	}
	return nil
}

// placedCopies are e's placements that hold a copy (or link): the folder
// and the agents it serves.
func placedCopies(e registry.Entry) [][2]string {
	var out [][2]string
	for _, p := range e.Placements {
		if p.Placed == "" {
			continue
		}
		what := "for " + strings.Join(p.Agents, ", ")
		if p.Link {
			what += " (a link)"
		}
		out = append(out, [2]string{placement.Path(e, p), what})
	}
	return out
}

// manifestFields lists the SKILL.md fields that are set, in a fixed order.
func manifestFields(m *manifest.Manifest) [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("author", m.Author)
	add("repository", m.Repository)
	add("license", m.License)
	add("compatibility", m.Compatibility)
	add("min_agent_version", m.MinAgentVersion)
	add("max_agent_version", m.MaxAgentVersion)
	add("agent_version", m.AgentVersion)
	add("display name", m.DisplayName)
	if m.Plugin != nil {
		if m.Plugin.Build != "" {
			add("plugin.build", m.Plugin.Build)
			if m.CGO {
				add("cgo", "true")
			}
		} else {
			add("plugin.command", m.Plugin.Command)
		}
	}
	add("scripts", strings.Join(m.Scripts, ", "))
	add("scripts_ignore", strings.Join(m.ScriptsIgnore, ", "))
	add("permissions.env", strings.Join(m.Permissions.Env, ", "))
	add("permissions.fs.read", strings.Join(m.Permissions.FS.Read, ", "))
	add("permissions.fs.write", strings.Join(m.Permissions.FS.Write, ", "))
	add("permissions.network", networkLine(m.Permissions.Network))
	add("allowed-tools", strings.Join(m.AllowedTools, ", "))
	add("argument-hint", m.ArgumentHint)
	if m.DisableModelInvocation {
		add("disable-model-invocation", "true")
	}
	if m.UserInvocable != nil {
		add("user-invocable", fmt.Sprint(*m.UserInvocable))
	}
	add("context", m.Context)
	add("agent", m.Agent)
	add("model", m.Model)
	add("when_to_use", m.WhenToUse)
	add("paths", strings.Join(m.Paths, ", "))
	add("disallowed-tools", strings.Join(m.DisallowedTools, ", "))
	add("shell", m.Shell)
	add("effort", m.Effort)
	if m.Background {
		add("background", "true")
	}
	if len(m.Hooks) > 0 {
		// One line: the events and how many hooks each has; --json has
		// them whole.
		var events []string
		for _, ev := range slices.Sorted(maps.Keys(m.Hooks)) {
			n := 1
			if l, ok := m.Hooks[ev].([]any); ok {
				n = len(l)
			}
			events = append(events, fmt.Sprintf("%s (%d)", ev, n))
		}
		add("hooks", strings.Join(events, ", ")+" (not run by this host)")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Metadata)) {
		add("metadata."+k, fmt.Sprint(m.Metadata[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(m.Extra)) {
		add(k+" (unknown)", fmt.Sprint(m.Extra[k]))
	}
	return out
}

// networkLine says what permissions.network grants, in words for info
// and trust: no entry means no network at all.
func networkLine(network []string) string {
	if len(network) == 0 {
		return "none (its code runs without network)"
	}
	return strings.Join(network, ", ")
}
