package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

type trustOptions struct {
	IO    *IOStreams
	Store func() (*registry.Store, error)
	// Discovery finds the skills of .agents/skills folders (SPEC §6).
	Discovery func() workspace.Discovery
	Installer func() (*install.Preparer, error)
	Placer    placer
	// RegisterMCP registers `agent mcp` with a client when a skill with
	// Go tools becomes placed (see registerMCPForPlaced).
	RegisterMCP func(client string) (path string, wrote bool, err error)
	Config      func() (*Config, error)

	Name    string
	Trusted bool
	// AcceptFindings trusts the skill despite audit findings at or above
	// audit.fail_on.
	AcceptFindings bool
	// Signer is --signer: a public key file to accept signatures by,
	// for Sources (--source), for the named skill's source, or for every
	// source.
	Signer  string
	Sources []string
}

func newCmdTrust(f *Factory, trusted bool, runF func(context.Context, *trustOptions) error) *cobra.Command {
	opts := &trustOptions{IO: f.IO, Store: f.Store, Discovery: f.discovery, Installer: f.installer, Placer: f.placements, RegisterMCP: f.registerPlacedMCP, Config: f.Config, Trusted: trusted}
	cmd := &cobra.Command{
		Use:   "trust <name>",
		Short: "Mark an installed skill as trusted, so AGENT_SKILLS=all activates it",
		Long: dedent(`
			Record that you trust an installed skill. A trusted skill is activated
			by AGENT_SKILLS=all and by naming it in AGENT_SKILLS; an untrusted
			one only by AGENT_SKILLS=all-untrusted.

			An untrusted skill is files only: its plugin is not built and neither
			its plugin nor its scripts run. Trusting it checks that its files are
			as installed, then builds its plugin from those files and
			describes its tools. A skill runs code on your machine: trust only
			what you have read or whose author you trust.

			A skill discovered in .agents/skills is trusted by its folder: the
			hash of its files now is recorded, and a file changed after that is
			refused at first use until you trust it again.

			Trusting audits the skill first ('agent skill audit') and shows the
			summary; a finding at or above audit.fail_on (default critical)
			refuses it unless --accept-findings is given.
		`),
		Example: dedent(`
			$ agent skill trust weather
			$ AGENT_SKILLS=weather agent tools
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Signer != "" && len(args) > 1 || opts.Signer == "" && len(args) != 1 {
				return exactArgs(1, "the <name> of an installed skill (with --signer, a name is optional)")(cmd, args)
			}
			if len(opts.Sources) > 0 && opts.Signer == "" {
				return usageErr(fmt.Errorf("--source goes with --signer KEYFILE"))
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if opts.Signer != "" {
				if runF != nil {
					return runF(cmd.Context(), opts)
				}
				return trustSignerRun(cmd.Context(), opts)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return trustRun(cmd.Context(), opts)
		},
	}
	if trusted {
		cmd.Flags().BoolVar(&opts.AcceptFindings, "accept-findings", false, "trust the skill even with audit findings at or above audit.fail_on")
	}
	if trusted {
		cmd.Use = "trust <name> | trust --signer KEYFILE [<name>] [--source PREFIX]..."
		cmd.Long += dedent(`

			With --signer KEYFILE, record a signer instead: skills signed by that
			public key (an SSH public key line such as ~/.ssh/id_ed25519.pub, a
			PEM PUBLIC KEY, or an armored GPG public key) are installed trusted
			without a prompt, by add and sync, from OCI registries (agent skill
			sign) and git (signed commits and tags). For the named skill's
			source, for each --source URL prefix, or, with neither, for every
			source. A signer recorded for a source makes a signature by an
			accepted key required for it: an unsigned or otherwise signed
			commit or artifact from it is refused. Signers are kept in
			$AGENT_HOME/signers.json; signatures.signers in config.yaml lists
			more.
		`)
		cmd.Example += dedent(`

			$ agent skill trust --signer team.pub --source oci://registry.internal/skills/
			$ agent skill trust --signer release.pub weather
		`)
		cmd.Flags().StringVar(&opts.Signer, "signer", "", "accept skills signed by this public key file (SSH, PEM or armored GPG)")
		cmd.Flags().StringArrayVar(&opts.Sources, "source", nil, "with --signer: the source URL prefix it signs for (repeatable; default: the named skill's source, or every source)")
	}
	if !trusted {
		cmd.Use = "untrust <name>"
		cmd.Short = "Mark an installed skill as untrusted"
		cmd.Long = dedent(`
			Record that you no longer trust an installed skill. It stays
			installed, but only AGENT_SKILLS=all-untrusted activates it.
		`)
		cmd.Example = "$ agent skill untrust weather"
	}
	return cmd
}

func trustRun(ctx context.Context, opts *trustOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), opts.Name)
	if err != nil {
		return err
	}
	if e.Source == "bundled" {
		return fmt.Errorf("change trust of %s: %w", e.Name, errBundledFixed)
	}
	if opts.Trusted {
		if err := auditBeforeTrust(opts, store, e); err != nil {
			return err
		}
	}
	if e.Source == registry.SourceDiscovered {
		return trustFolderRun(opts, store, e)
	}
	before, err := store.List()
	if err != nil {
		return err
	}
	defer settlePlacements(opts.Placer, opts.RegisterMCP, opts.IO, store, before)
	if !opts.Trusted {
		if _, err := store.SetTrusted(e.Canonical, false); err != nil {
			return err
		}
	}
	if opts.Trusted {
		inst, err := opts.Installer()
		if err != nil {
			return err
		}
		te, err := registry.NewPipeline(store).Trust(ctx, registry.TrustRequest{Name: e.Canonical}, inst.Prepare)
		if err != nil {
			return err
		}
		if te.Plugin != nil {
			fmt.Fprintf(opts.IO.ErrOut, "Built the plugin of %s: %d tool(s)\n", e.Name, len(te.Tools))
		}
		fmt.Fprintf(opts.IO.ErrOut, "Trusted %s: AGENT_SKILLS=all or AGENT_SKILLS=%s activates it\n", e.Name, e.Canonical)
		if m, _, err := registry.LoadInstalled(te); err == nil {
			writeGrants(opts.IO.ErrOut, m.Permissions)
			writeCGO(opts.IO.ErrOut, m)
		}
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "Untrusted %s: only AGENT_SKILLS=all-untrusted activates it now\n", e.Name)
	}
	return nil
}

// trustFolderRun trusts or untrusts a discovered skill (SPEC §6): its
// folder is recorded with the hash of its files now, which every first
// use checks, so an edit made after this needs trust again.
func trustFolderRun(opts *trustOptions, store *registry.Store, e registry.Entry) error {
	if !opts.Trusted {
		if _, err := trust.Of(store).UntrustFolder(e.Path); err != nil {
			return fmt.Errorf("untrust %s: %w", e.Canonical, err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "Untrusted %s (discovered in %s): only AGENT_SKILLS=all-untrusted activates it now\n", e.Canonical, e.Path)
		return nil
	}
	m, _, err := workspace.LoadManifest(e)
	if err != nil {
		return fmt.Errorf("trust %s: %w", e.Canonical, err)
	}
	rec, err := trust.Of(store).TrustFolder(e.Path, e.Canonical)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Trusted %s (discovered in %s, files %s): AGENT_SKILLS=all or AGENT_SKILLS=%s activates it; an edit to its files needs 'agent skill trust %s' again\n",
		e.Canonical, e.Path, rec.DirHash, e.Canonical, e.Canonical)
	if m.Plugin != nil {
		fmt.Fprintf(opts.IO.ErrOut, "note: its Go plugin is built only for an installed or linked skill: 'agent skill link %s' builds it and serves its tools\n", e.Path)
	}
	writeGrants(opts.IO.ErrOut, m.Permissions)
	return nil
}

// trustSignerRun records a signer (--signer) for the named skill's
// source, the --source prefixes, or every source.
func trustSignerRun(ctx context.Context, opts *trustOptions) error {
	key, err := os.ReadFile(opts.Signer)
	if err != nil {
		return fmt.Errorf("read the signer key: %w", err)
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	sources := opts.Sources
	if opts.Name != "" {
		e, err := workspace.FindEntry(ctx, trust.Of(store), opts.Discovery(), opts.Name)
		if err != nil {
			return err
		}
		if e.Source != registry.SourceGit && e.Source != registry.SourceOCI {
			return fmt.Errorf("%s is not from a git or OCI source; a signer is for skills fetched from one", e.Name)
		}
		sources = append(sources, e.URL)
	}
	k, err := trust.Of(store).AddSigner(key, sources)
	if err != nil {
		return err
	}
	scope := "every source"
	if len(sources) > 0 {
		scope = strings.Join(sources, ", ") + " (a signature by an accepted key is now required there)"
	}
	fmt.Fprintf(opts.IO.ErrOut, "Accepting skills signed by %s from %s\n", k, scope)
	return nil
}

// writeCGO says that a skill's plugin builds with cgo (SPEC §3
// agent.cgo): the C toolchain then runs at build time.
func writeCGO(w io.Writer, m *manifest.Manifest) {
	if m.CGO && m.Plugin != nil && m.Plugin.Build != "" {
		fmt.Fprintln(w, "  its plugin builds with cgo (agent.cgo): the C compiler runs at build time")
	}
}

// writeGrants says what a skill's code may reach beyond its own folder
// (SKILL.md permissions, hashed with it and enforced by the sandbox): the
// paths, the hosts, the environment variables, and a warning for each
// permission that reaches far (manifest.Broad). add shows it before it
// asks, trust when it trusts. The values come from SKILL.md, so they are
// shown escaped.
func writeGrants(w io.Writer, p manifest.Permissions) {
	none := func(l []string) string {
		if len(l) == 0 {
			return "nothing more"
		}
		return strings.Join(l, ", ")
	}
	env := "only PATH, HOME, LANG and TMPDIR"
	if len(p.Env) > 0 {
		env = "PATH, HOME, LANG, TMPDIR and " + strings.Join(p.Env, ", ") + " (secrets only where named in full)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  its code may read: its own folder and %s; write: a temp folder per call and %s; network: %s\n",
		none(p.FS.Read), none(p.FS.Write), networkLine(p.Network))
	fmt.Fprintf(&b, "  its code sees the environment variables: %s\n", env)
	for _, msg := range manifest.Broad(p) {
		fmt.Fprintf(&b, "  warning: %s\n", msg)
	}
	fmt.Fprint(w, workspace.EscapeTerminal(b.String()))
}

// auditBeforeTrust audits the skill's files as they are now, shows the
// summary, records it, and refuses at or above audit.fail_on unless
// --accept-findings.
func auditBeforeTrust(opts *trustOptions, store *registry.Store, e registry.Entry) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	var allow []string
	if opts.AcceptFindings {
		allow = []string{e.Canonical}
	}
	gate := newAuditGate(cfg, opts.IO.ErrOut, allow, "trust it with 'agent skill trust %s --accept-findings' to trust it anyway")
	m, _, err := workspace.LoadManifest(e)
	if err != nil {
		return fmt.Errorf("trust %s: %w", e.Canonical, err)
	}
	cerr := gate.check(e.Canonical, e.URL, os.DirFS(e.Path), m)
	if err := gate.save(store.Home, []registry.Entry{e}); err != nil {
		return errors.Join(cerr, err)
	}
	return cerr
}
