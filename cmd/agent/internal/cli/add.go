package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/internal/app/catalog"
	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/wellknown"
)

type addOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)
	Placer    placer
	Env       func() (placement.Env, error)
	// RegisterMCP registers `agent mcp` with an MCP client for placed
	// skills with Go tools (Factory.registerPlacedMCP).
	RegisterMCP func(client string) (path string, wrote bool, err error)
	Config      func() (*Config, error)

	Source  string
	Skills  []string
	All     bool
	List    bool
	JSON    bool
	Name    string
	Ref     string
	Version string
	Trust   bool
	// TrustNames are --trust=NAME: skills taken despite audit findings.
	TrustNames []string
	// TrustDeps trusts the skills the named ones require (SPEC §21).
	TrustDeps bool
	DryRun    bool
	Yes       bool
	// Placements (SPEC §19).
	Agent  string
	Global bool
	Link   bool
}

func newCmdAdd(f *Factory, runF func(context.Context, *addOptions) error) *cobra.Command {
	opts := &addOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, Env: f.placementEnv, RegisterMCP: f.registerPlacedMCP, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "add <source> [skill...]",
		Short: "Install skills from git and pin them to a commit",
		Long: dedent(`
			Install a skill from a git repository and pin it to one commit.

			<source> is an https, http, ssh, git or file URL, a local path to a git
			repository, or owner/repo for GitHub. source@X is the same as
			--version X when X is a version constraint (^1.2, ">=1, <2", 1.x)
			and --ref X when it is a tag, branch or commit SHA. A GitHub web
			address (.../tree/REF/PATH or .../blob/REF/PATH/SKILL.md) names the
			repository, the ref and the skill at once.

			Skills are looked for, stopping at the first step that finds any:
			  1. the root SKILL.md
			  2. */SKILL.md, skills/ three levels down (.curated, .experimental,
			     .system too), plugins/*/skills/*, .claude/skills/*,
			     .agents/skills/* and other hidden agent folders, and the skills
			     .claude-plugin/marketplace.json or plugin.json declare
			  3. the whole tree six levels down (without .git, node_modules,
			     vendor, dist, build, testdata)
			Name one or more as [skill...], by name or by folder path; a name
			the first steps miss is looked for in the whole tree. --all adds
			every skill found, --list shows them and installs nothing. Two
			skills with one name are never dropped: naming it is an error that
			lists both paths.

			The skill is cloned, validated, checked against this agent's version,
			its Go plugin is built with 'go build' and hashed, its tools are
			described, and only then is it registered. On any failure nothing is
			left behind.

			--agent places the installed skill where other agents read skills:
			a read-only copy (or with --link a symbolic link) in each agent's
			project folder, or with --global its user folder ('agent skill
			agents' lists them). update, rollback, sync, trust, untrust and
			remove keep the copies in step, and verify checks them. A folder
			that agent did not make is never overwritten. Only trusted skills
			are placed.

			A skill runs code on your machine. --trust records that you trust it,
			so that AGENT_SKILLS=all activates it. Without --trust you are asked on
			a terminal; elsewhere pass --yes to install it untrusted.

			Before asking, each skill is audited ('agent skill audit') and the
			summary shown; a finding at or above audit.fail_on (default
			critical) refuses it unless --trust=NAME names it.

			Guide: docs/commands.md; other agents: docs/mcp.md.
		`),
		Example: dedent(`
			# the highest 1.x tag, trusted
			$ agent skill add https://github.com/acme/skills@^1 weather --trust

			# a branch, installed untrusted without asking
			$ agent skill add acme/skills --ref main --yes

			# a local repository under another name
			$ agent skill add ./my-skill --name my-skill-dev --trust

			# see what a repository holds, then add two of its skills
			$ agent skill add anthropics/skills --list
			$ agent skill add anthropics/skills pdf xlsx --trust

			# place it for Claude Code, Codex and Cursor in this project
			$ agent skill add acme/skills weather --trust --agent claude-code,codex,cursor

			# one skill by its GitHub address
			$ agent skill add https://github.com/anthropics/skills/tree/main/skills/pdf
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr(fmt.Errorf("%s needs <source> and optionally [skill...]; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			opts.Skills = args[1:]
			switch {
			case opts.All && len(opts.Skills) > 0:
				return usageErr(fmt.Errorf("give [skill...] or --all, not both"))
			case opts.List && (opts.All || len(opts.Skills) > 0):
				return usageErr(fmt.Errorf("--list shows every skill and installs nothing; drop [skill...] and --all"))
			case opts.JSON && !opts.List:
				return usageErr(fmt.Errorf("--json goes with --list"))
			case opts.Name != "" && (opts.All || len(opts.Skills) > 1):
				return usageErr(fmt.Errorf("--name renames one skill; add the others separately"))
			case (opts.Global || opts.Link) && opts.Agent == "":
				return usageErr(fmt.Errorf("--global and --link say how to place a skill; add --agent NAME (see 'agent skill agents')"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return addRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "add every skill the repository holds, from one fetch")
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the skills found (name, path, description) and install nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "with --list: print JSON")
	cmd.Flags().StringVar(&opts.Name, "name", "", "install under this `name` instead of the manifest's")
	cmd.Flags().StringVar(&opts.Ref, "ref", "", "check out this branch, tag or commit `SHA`")
	cmd.Flags().StringVar(&opts.Version, "version", "", "pick the highest tag matching this semver `constraint`")
	cmd.Flags().Var(trustFlag{on: &opts.Trust, names: &opts.TrustNames}, "trust", "trust the skill: AGENT_SKILLS=all will activate it; --trust=NAME also takes NAME despite audit findings")
	cmd.Flags().Lookup("trust").NoOptDefVal = "true"
	cmd.Flags().BoolVar(&opts.TrustDeps, "trust-deps", false, "trust the skills it requires (agent.requires) too; --trust trusts only what you name")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list every skill add would install, the ones it requires included, and install nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask; without --trust the skill is installed untrusted")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "place the skill in these agents' skill folders: `NAME[,NAME...]` or detected (see 'agent skill agents')")
	cmd.Flags().BoolVar(&opts.Global, "global", false, "with --agent: the agents' user folders instead of the project's")
	cmd.Flags().BoolVar(&opts.Link, "link", false, "with --agent: a symbolic link to the install instead of a read-only copy")
	return cmd
}

// sourceFromArgs merges source@X with --ref and --version.
func sourceFromArgs(raw, ref, version string) (gitsrc.Source, error) {
	if ref != "" && version != "" {
		return gitsrc.Source{Raw: raw}, usageErr(fmt.Errorf("--ref and --version exclude each other: a ref names one commit, a constraint picks the highest matching tag"))
	}
	src, err := gitsrc.ParseSource(raw)
	if err != nil {
		return src, err
	}
	if (ref != "" || version != "") && (src.Ref != "" || src.Constraint != "") {
		return src, usageErr(fmt.Errorf("%q already names a version after '@'; drop the @ part or the --ref/--version flag", raw))
	}
	if ref != "" {
		src.Ref = ref
	}
	if version != "" {
		src.Constraint = version
	}
	return src, nil
}

func addRun(ctx context.Context, opts *addOptions) error {
	shortLived()
	if source, skill, ok := catalog.SplitID(opts.Source); ok {
		// A search hit's id: SOURCE#SKILL.
		opts.Source, opts.Skills = source, append([]string{skill}, opts.Skills...)
	}
	src, err := sourceFromArgs(opts.Source, opts.Ref, opts.Version)
	if err != nil {
		return err
	}
	// https://HOST[/PATH] is a well-known site when it serves an index.
	src = (&wellknown.Fetcher{}).Resolve(ctx, src)
	if opts.Name != "" {
		if _, err := manifest.Canonical(opts.Name); err != nil {
			return fmt.Errorf("--name: %w", err)
		}
	}
	skills := opts.Skills
	if src.Skill != "" {
		// A GitHub tree/ or blob/ address names the skill itself.
		skills = append([]string{src.Skill}, skills...)
	}
	if opts.List {
		return addListRun(ctx, opts, src)
	}
	var agents []placement.Agent
	if opts.Agent != "" {
		env, err := opts.Env()
		if err != nil {
			return err
		}
		if agents, err = placement.Lookup(opts.Agent, env); err != nil {
			return usageErr(err)
		}
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	// A source that accepted signers sign is trusted for its signature,
	// without a prompt; without one it is refused (registry.ErrNotVerified).
	keys, _ := store.Signatures.Keys(src.URL)
	requireSigned := !opts.Trust && !opts.Yes && len(keys) > 0
	ask := !opts.Trust && !opts.Yes && !requireSigned
	if ask && !opts.IO.CanPrompt() {
		return fmt.Errorf("refusing to install untrusted skill from %s: %w", src.URL, errUntrustedNoTTY)
	}
	// Once the skills are fetched and read, and before anything is
	// written or built, say what each asks for; then ask. --yes alone
	// installs files only, and trust shows it then.
	review := func(rs []registry.Reviewed) error {
		for _, r := range rs {
			writeRequest(opts.IO.ErrOut, r)
		}
		if !ask {
			return nil
		}
		ok, err := confirm(opts.IO, fmt.Sprintf("Install untrusted skill from %s?", src.URL))
		if err != nil {
			return err
		}
		if !ok {
			return errCanceled
		}
		return nil
	}
	if opts.Yes && !opts.Trust {
		review = nil
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	gate := newAuditGate(cfg, opts.IO.ErrOut, opts.TrustNames, "add it with --trust=%s to install it anyway")
	review = gate.review(src.Raw, review)
	inst, err := opts.Installer()
	if err != nil {
		return err
	}
	progress := opts.IO.Progress()
	pipe := registry.NewPipeline(store)
	req := registry.AddRequest{
		Source:        src,
		Skills:        skills,
		All:           opts.All,
		Name:          opts.Name,
		Trusted:       opts.Trust,
		RequireSigned: requireSigned,
		AgentVersion:  Version,
		Progress:      progress,
		Warn:          opts.IO.Warn,
	}
	// What the named skills require is resolved before the prompt, and
	// before anything is written: a conflict or a cycle installs nothing.
	// Once the user said yes, the dependencies are installed first, so
	// that one that fails to fetch or build leaves nothing installed.
	var required []deps.Node
	var depEntries []registry.Entry
	inner := review
	review = func(rs []registry.Reviewed) error {
		var err error
		if required, err = resolveAdd(ctx, store, pipe, progress, src, rs); err != nil {
			return err
		}
		writeDeps(opts.IO.ErrOut, required, opts.TrustDeps)
		if err := auditDeps(ctx, pipe, progress, required, gate); err != nil {
			return err
		}
		if opts.DryRun {
			for _, r := range rs {
				writeRequest(opts.IO.ErrOut, r)
			}
			return errDryRun
		}
		if inner != nil {
			if err := inner(rs); err != nil {
				return err
			}
		}
		depEntries, err = addDeps(ctx, pipe, required, opts.TrustDeps, inst.Prepare, req)
		return err
	}
	req.Review = review
	entries, err := pipe.AddSkills(ctx, req, inst.Prepare)
	if errors.Is(err, errDryRun) {
		fmt.Fprintln(opts.IO.ErrOut, "Dry run: nothing installed.")
		return nil
	}
	if err != nil {
		depEntries = dropUnneeded(ctx, store, opts.IO.ErrOut, required, depEntries, entries)
	}
	entries = append(depEntries, entries...)
	for _, e := range entries {
		printInstalled(opts.IO.ErrOut, e)
	}
	if serr := gate.save(store.Home, entries); serr != nil {
		err = errors.Join(err, serr)
	}
	if len(agents) > 0 && len(entries) > 0 {
		m, perr := opts.Placer(store)
		if perr != nil {
			return errors.Join(err, perr)
		}
		var placed []registry.Entry
		for _, e := range entries {
			pe, perr := m.Add(e, agents, opts.Global, opts.Link)
			if perr != nil {
				err = errors.Join(err, perr)
				continue
			}
			placed = append(placed, pe)
			if len(placedCopies(pe)) > 0 {
				// Read-only copies defeat rm -rf as a normal user.
				fmt.Fprintf(opts.IO.ErrOut, "  the placed copies are read-only: 'agent skill remove %s' removes them with the install\n", pe.Canonical)
			}
		}
		if rerr := registerMCPForPlaced(opts.IO.ErrOut, opts.RegisterMCP, agents, placed); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// registerMCPForPlaced registers `agent mcp` with each named agent that
// has an MCP configuration this host writes, once, when a placed skill has
// Go tools: the agent reads the SKILL.md it was given, and its tools are
// served over MCP (SPEC §19). The others are told what is missing.
func registerMCPForPlaced(errOut io.Writer, register func(client string) (string, bool, error), agents []placement.Agent, placed []registry.Entry) error {
	var withTools []string
	for _, e := range placed {
		if e.Plugin != nil && len(e.Tools) > 0 && e.Trusted {
			withTools = append(withTools, e.Canonical)
		}
	}
	if len(withTools) == 0 || register == nil {
		return nil
	}
	names := strings.Join(withTools, ", ")
	var errs error
	done := map[string]bool{}
	for _, a := range agents {
		if a.MCP == "" {
			fmt.Fprintf(errOut, "note: %s gets the instructions of %s but not its Go tools: agent writes no MCP configuration for it; register 'agent mcp' (AGENT_SKILLS=all) in its MCP settings yourself\n", a.Display, names)
			continue
		}
		if done[a.MCP] {
			continue
		}
		done[a.MCP] = true
		path, wrote, err := register(a.MCP)
		switch {
		case err != nil:
			errs = errors.Join(errs, fmt.Errorf("register agent mcp for %s: %w", a.Display, err))
		case wrote:
			fmt.Fprintf(errOut, "Registered the MCP server \"agent\" (AGENT_SKILLS=all) in %s, so that %s reaches the tools of %s\n", path, a.Display, names)
		default:
			fmt.Fprintf(errOut, "%s already registers an MCP server \"agent\"; left as it is: for %s to reach the tools of %s, its AGENT_SKILLS must include them\n", path, a.Display, names)
		}
		if step := mcp.NextStep(a.MCP, ""); err == nil && step != "" {
			fmt.Fprintf(errOut, "next: %s\n", step)
		}
	}
	return errs
}

// writeRequest says, before an add, which skill it is and what its code
// would reach.
func writeRequest(w io.Writer, r registry.Reviewed) {
	where := ""
	if r.Path != "" && r.Path != "." {
		where = " (" + r.Path + ")"
	}
	fmt.Fprint(w, workspace.EscapeTerminal(fmt.Sprintf("Skill %s%s: %s\n", r.Canonical, where, workspace.FirstLine(r.Manifest.Description, 120))))
	writeGrants(w, r.Manifest.Permissions)
	writeCGO(w, r.Manifest)
}

func printInstalled(w io.Writer, e registry.Entry) {
	version := ""
	if e.Version != "" {
		version = " " + e.Version
	}
	// A version that is not semver is shown as SKILL.md wrote it.
	fmt.Fprint(w, workspace.EscapeTerminal(fmt.Sprintf("Installed %s%s (%s) from %s\n", e.Name, version, shortSHA(e.CommitSHA), e.URL)))
	if len(e.Tools) > 0 {
		fmt.Fprintf(w, "  %d tool(s) from its plugin\n", len(e.Tools))
	}
	// Only a plugin built from source can need cgo, and the listing says
	// whether there is one: add --all of a thousand skills read and
	// parsed every SKILL.md again here.
	if l := e.Listing; l == nil || l.Manifest.Plugin != nil && l.Manifest.Plugin.Build != "" {
		if m, _, err := registry.LoadInstalled(e); err == nil {
			writeCGO(w, m)
		}
	}
	if e.Trusted {
		fmt.Fprintf(w, "  trusted: activate it with AGENT_SKILLS=all or AGENT_SKILLS=%s\n", e.Canonical)
	} else {
		fmt.Fprintf(w, "  untrusted: files only; no plugin is built and no script or plugin runs until you trust it with 'agent skill trust %s'\n", e.Canonical)
	}
}

// foundJSON is one skill in `add --list --json`.
type foundJSON struct {
	Name        string   `json:"name"`
	DisplayName string   `json:"display_name,omitempty"`
	Path        string   `json:"path"`
	Description string   `json:"description"`
	Via         string   `json:"found_in"`
	Duplicate   bool     `json:"duplicate,omitempty"`
	Error       string   `json:"error,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// addListRun prints what the source holds and installs nothing.
func addListRun(ctx context.Context, opts *addOptions, src gitsrc.Source) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	progress := opts.IO.Progress()
	d, _, err := registry.NewPipeline(store).FindSkills(ctx, src, progress)
	if err != nil {
		return err
	}
	dups := d.Duplicates()
	out := []foundJSON{}
	for _, f := range d.Skills {
		j := foundJSON{Name: f.Name(), Path: f.Path(), Via: f.Via}
		if m := f.Manifest; m != nil {
			j.DisplayName, j.Description = m.DisplayName, m.Description
			c, _ := manifest.Canonical(m.Name)
			_, j.Duplicate = dups[c]
		}
		if f.Err != nil {
			j.Error = f.Err.Error()
		}
		for _, p := range f.Warnings {
			j.Warnings = append(j.Warnings, p.String())
		}
		out = append(out, j)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no skill found in %s\n", src.Raw)
		return nil
	}
	t := newTable(opts.IO.Out, "NAME", "PATH", "DESCRIPTION")
	for _, j := range out {
		desc := workspace.FirstLine(j.Description, 72)
		if j.Error != "" {
			desc = "invalid: " + workspace.FirstLine(j.Error, 64)
		}
		name := j.Name
		if j.Duplicate {
			name += " (duplicate)"
		}
		t.row(name, j.Path, desc)
	}
	if err := t.flush(); err != nil {
		return err
	}
	names := make([]string, 0, len(dups))
	for name := range dups {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		paths := dups[name]
		fmt.Fprintf(opts.IO.ErrOut, "warning: %d skills are named %s (%s); add one by its path\n", len(paths), name, strings.Join(paths, ", "))
	}
	fmt.Fprintf(opts.IO.ErrOut, "%d skill(s) in %s; add some with 'agent skill add %s <name>...' or all with --all\n", len(out), src.Raw, src.Raw)
	return nil
}

func versionOrDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// errDryRun ends add --dry-run's review: everything is listed, nothing
// written.
var errDryRun = errors.New("dry run")
