package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/install"
	"github.com/agentskills/agent/internal/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

type trustOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)
	Placer    placer

	Name    string
	Trusted bool
}

func newCmdTrust(f *Factory, trusted bool, runF func(context.Context, *trustOptions) error) *cobra.Command {
	opts := &trustOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, Trusted: trusted}
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
		`),
		Example: dedent(`
			$ agent skill trust weather
			$ AGENT_SKILLS=weather agent tools
		`),
		Args: exactArgs(1, "the <name> of an installed skill"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return trustRun(cmd.Context(), opts)
		},
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
	e, err := workspace.FindEntry(ctx, store, opts.Name)
	if err != nil {
		return err
	}
	if e.Source == "bundled" {
		return fmt.Errorf("change trust of %s: %w", e.Name, errBundledFixed)
	}
	before, err := store.List()
	if err != nil {
		return err
	}
	defer settlePlacements(opts.Placer, store, before, opts.IO.Warn)
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
		te, err := store.Trust(ctx, registry.TrustRequest{Name: e.Canonical}, inst.Prepare)
		if err != nil {
			return err
		}
		if te.Plugin != nil {
			fmt.Fprintf(opts.IO.ErrOut, "Built the plugin of %s: %d tool(s)\n", e.Name, len(te.Tools))
		}
		warnBundledName(opts.IO.ErrOut, te)
		fmt.Fprintf(opts.IO.ErrOut, "Trusted %s: AGENT_SKILLS=all or AGENT_SKILLS=%s activates it\n", e.Name, e.Canonical)
		if m, _, err := registry.LoadInstalled(te); err == nil {
			writeGrants(opts.IO.ErrOut, m.Permissions)
		}
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "Untrusted %s: only AGENT_SKILLS=all-untrusted activates it now\n", e.Name)
	}
	return nil
}

// writeGrants says what a trusted skill's code may reach beyond its own
// folder (SKILL.md permissions, hashed with it and enforced by the
// sandbox).
func writeGrants(w io.Writer, p manifest.Permissions) {
	none := func(l []string) string {
		if len(l) == 0 {
			return "nothing more"
		}
		return strings.Join(l, ", ")
	}
	fmt.Fprintf(w, "  its code may read: its own folder and %s; write: a temp folder per call and %s; network: %s\n",
		none(p.FS.Read), none(p.FS.Write), networkLine(p.Network))
}
