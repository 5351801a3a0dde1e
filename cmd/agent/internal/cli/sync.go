package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
)

type syncOptions struct {
	IO        *IOStreams
	Store     func() (*registry.Store, error)
	Installer func() (*install.Preparer, error)
	Placer    placer
	// RegisterMCP registers `agent mcp` with a client when a skill with
	// Go tools becomes placed (see registerMCPForPlaced).
	RegisterMCP func(client string) (path string, wrote bool, err error)

	File   string
	Frozen bool
	Trust  bool
	JSON   bool
	Mirror string
}

func newCmdSync(f *Factory, runF func(context.Context, *syncOptions) error) *cobra.Command {
	opts := &syncOptions{IO: f.IO, Store: f.Store, Installer: f.installer, Placer: f.placements, RegisterMCP: f.registerPlacedMCP}
	cmd := &cobra.Command{
		Use:   "sync [FILE] [--frozen] [--trust]",
		Short: "Make the installed skills exactly those of skills.lock",
		Long: dedent(`
			Install, move and remove skills until the installed set equals the
			lock (skills.lock in the current folder unless FILE is given). Each
			skill is fetched at its locked commit SHA, whatever its tag or branch
			points to now, and refused unless its folder has the locked h1: hash;
			each skill changes atomically, so an interrupted sync leaves every
			skill either as it was or as locked. A skill installed under a locked
			name from another source is a conflict, and nothing is changed.

			--frozen changes nothing: it prints the differences and exits 1 when
			the installed set is not the lock (for CI).

			Trust is your decision, not the lock's, and it follows content: a
			skill stays trusted only at a folder hash this home trusted it at, or
			one an accepted signer signed. For the others that the lock marks
			trusted or that are trusted here, sync asks once on a terminal;
			without one it installs them untrusted (files only) unless --trust is
			given, and names each: review it, then agent skill trust NAME.

			--mirror oci://HOST/PREFIX (or mirrors: in config.yaml) fetches git
			skills from an OCI mirror that agent skill mirror filled, never from
			the git host; the h1: check is the same.

			Guide: docs/teams.md.
		`),
		Example: dedent(`
			$ agent skill sync
			$ agent skill sync ci/skills.lock --trust
			$ agent skill sync --frozen    # in CI: fail if anything differs
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr(fmt.Errorf("sync takes at most one lock FILE; see '%s --help'", cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = registry.LockFileName
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return syncRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Frozen, "frozen", false, "change nothing; exit 1 with the differences if the installed set is not the lock")
	cmd.Flags().BoolVar(&opts.Trust, "trust", false, "trust the skills the lock marks trusted, and those trusted here, at the locked commits without asking")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "with --frozen, print the differences as JSON")
	cmd.Flags().StringVar(&opts.Mirror, "mirror", "", "fetch every git skill from this OCI mirror (oci://HOST/PREFIX) instead of its git host")
	return cmd
}

func syncRun(ctx context.Context, opts *syncOptions) error {
	l, err := registry.ReadLock(opts.File)
	if err != nil {
		return err
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	if opts.Mirror != "" {
		m := registry.Mirror{OCI: opts.Mirror}
		if err := m.Check(); err != nil {
			return usageErr(err)
		}
		store.Mirrors = []registry.Mirror{m}
	}
	if opts.Frozen {
		entries, err := store.List()
		if err != nil {
			return err
		}
		diff := registry.DiffLock(entries, l)
		if diff == nil {
			diff = []registry.SyncChange{} // JSON [], not null
		}
		if opts.JSON {
			if err := writeJSON(opts.IO.Out, diff); err != nil {
				return err
			}
		} else {
			for _, c := range diff {
				fmt.Fprintln(opts.IO.Out, workspace.EscapeTerminal(describeChange(c)))
			}
		}
		if len(diff) > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "The installed skills differ from %s in %d skill(s); run agent skill sync %s to install the lock, or agent skill lock to record this set\n", opts.File, len(diff), opts.File)
			return errSilent
		}
		fmt.Fprintf(opts.IO.ErrOut, "The installed skills match %s\n", opts.File)
		return nil
	}
	inst, err := opts.Installer()
	if err != nil {
		return err
	}
	before, err := store.List()
	if err != nil {
		return err
	}
	progress := opts.IO.Progress()
	errOut := opts.IO.ErrOut
	done, err := registry.NewPipeline(store).Sync(ctx, l, registry.SyncRequest{
		AgentVersion: Version,
		Progress:     progress,
		Warn:         opts.IO.Warn,
		Trust: func(names []string) (bool, error) {
			if opts.Trust {
				return true, nil
			}
			if !opts.IO.CanPrompt() {
				fmt.Fprintf(errOut, "%s: this home has not trusted the locked commits; installing untrusted (files only). Pass --trust to trust them\n", strings.Join(names, ", "))
				return false, nil
			}
			return confirm(opts.IO, fmt.Sprintf("This home has not trusted %s at the locked commits: their plugins will be built and their code run. Trust them?", strings.Join(names, ", ")))
		},
		Done: func(c registry.SyncChange) { fmt.Fprintln(opts.IO.Out, workspace.EscapeTerminal(describeChange(c))) },
		Untrusted: func(c registry.SyncChange) {
			fmt.Fprintln(errOut, workspace.EscapeTerminal(fmt.Sprintf("%s is installed untrusted at %s (files only); review it, then run agent skill trust %s", c.Name, shortSHA(c.NewSHA), c.Name)))
		},
	}, inst.Prepare)
	if err != nil {
		settlePlacements(opts.Placer, opts.RegisterMCP, opts.IO, store, before)
		return err
	}
	if err := lockPlacements(opts.Placer, store, l); err != nil {
		return err
	}
	settlePlacements(opts.Placer, opts.RegisterMCP, opts.IO, store, before)
	if len(done) == 0 {
		fmt.Fprintf(errOut, "The installed skills already match %s\n", opts.File)
	}
	return nil
}

// describeChange renders one difference, naming commits and hashes so
// that a CI log shows what moved.
func describeChange(c registry.SyncChange) string {
	switch c.Action {
	case registry.SyncAdd:
		return fmt.Sprintf("%s: add %s at %s (%s)", c.Name, c.Source, shortSHA(c.NewSHA), c.NewHash)
	case registry.SyncRemove:
		return fmt.Sprintf("%s: remove (installed %s at %s, not in the lock)", c.Name, c.Source, shortSHA(c.OldSHA))
	case registry.SyncConflict:
		return fmt.Sprintf("%s: conflict: installed from %s, locked from %s", c.Name, c.OldSource, c.Source)
	case registry.SyncMove:
		s := fmt.Sprintf("%s: %s → %s", c.Name, shortSHA(c.OldSHA), shortSHA(c.NewSHA))
		if c.OldHash != c.NewHash {
			s += fmt.Sprintf(" (%s → %s)", versionOrDash(c.OldHash), c.NewHash)
		}
		if c.OldPath != c.NewPath {
			s += fmt.Sprintf(" folder %q → %q", c.OldPath, c.NewPath)
		}
		return s
	}
	return fmt.Sprintf("%s: %s", c.Name, c.Action)
}
