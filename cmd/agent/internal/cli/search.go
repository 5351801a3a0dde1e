package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/audit"
	"github.com/agentskills/agent/internal/app/catalog"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/trust"
)

type searchOptions struct {
	IO        *IOStreams
	Config    func() (*Config, error)
	Store     func() (*registry.Store, error)
	Discovery func() workspace.Discovery
	LookupEnv func(string) (string, bool)

	Query string
	JSON  bool
	Limit int
}

func newCmdSearch(f *Factory, runF func(context.Context, *searchOptions) error) *cobra.Command {
	opts := &searchOptions{IO: f.IO, Config: f.Config, Store: f.Store, Discovery: f.discovery, LookupEnv: f.LookupEnv}
	cmd := &cobra.Command{
		Use:   "search [query]",
		Short: "Find skills: installed ones, configured sources and search APIs, in one ranked list",
		Long: dedent(`
			Search every skill this agent can see, in one list ranked for the
			query (a word in a skill's name ranks above a word in its
			description):

			  - installed, bundled and discovered skills;
			  - sources: in config.yaml: git sources (discovered as add --list
			    does, remembered by commit) and OCI registries (oci://HOST/PREFIX:
			    every repository under PREFIX, at its highest version tag);
			  - indexes: in config.yaml and $SKILLS_API_URL: skills.sh-compatible
			    search APIs (GET <base>/api/search?q=), such as agent catalog
			    serve or https://skills.sh.

			Each hit shows its version, whether an accepted key signed it, what
			it declares it reads, writes, reaches and needs from the
			environment, and its id: 'agent skill add <id>' installs it.

			Guide: docs/catalog.md.
		`),
		Example: dedent(`
			$ agent skill search pdf
			$ agent skill search "pdf forms" --json | jq -r '.[0].id'
			$ SKILLS_API_URL=http://127.0.0.1:8765 agent skill search pdf
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr(fmt.Errorf("%s takes one query; quote a query of several words; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Query = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return searchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "show at most `N` skills")
	return cmd
}

// indexes are the search APIs to ask: indexes: in config.yaml, then
// $SKILLS_API_URL (as npx skills reads it).
func indexes(cfg *Config, lookup func(string) (string, bool)) []string {
	out := append([]string(nil), cfg.Indexes...)
	if u, ok := lookup("SKILLS_API_URL"); ok && u != "" {
		out = append(out, u)
	}
	return out
}

// collector reads the configured sources for search and the catalog.
func collector(store *registry.Store, cfg *Config, ios *IOStreams) *catalog.Collector {
	oci := store.OCI
	if oci == nil {
		oci = &ocisrc.Client{}
	}
	c := &catalog.Collector{Store: registry.NewPipeline(store), OCI: oci, CacheDir: filepath.Join(cfg.Home, "cache", "search"), Progress: ios.Progress()}
	// Each surveyed skill is audited (agent skill audit's rules, offline)
	// so that a hit shows what the audit would say before an add.
	rules, err := auditRules(cfg)
	if err != nil {
		fmt.Fprintf(ios.ErrOut, "warning: hits are not audited: %s\n", workspace.EscapeTerminal(err.Error()))
		return c
	}
	c.AuditRules = rules.Pack.String()
	c.Audit = func(fsys fs.FS, m *manifest.Manifest) string {
		r, err := rules.Audit(fsys, m)
		if err != nil {
			return ""
		}
		return r.Summary()
	}
	return c
}

// lastAudit is the summary of the audit recorded for an installed skill
// (add, trust and agent skill audit record one), "" when none is.
func lastAudit(home string) func(canonical string) string {
	return func(canonical string) string {
		if r, err := audit.Last(home, canonical); err == nil && r != nil {
			return r.Summary()
		}
		return ""
	}
}

func searchRun(ctx context.Context, opts *searchOptions) error {
	shortLived()
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	store, err := opts.Store()
	if err != nil {
		return err
	}
	entries, warnings, err := workspace.AllEntries(ctx, trust.Of(store), opts.Discovery())
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", w)
	}
	found, errs := collector(store, cfg, opts.IO).Sources(ctx, cfg.Sources)
	for _, err := range errs {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", workspace.EscapeTerminal(err.Error()))
	}
	if strings.TrimSpace(opts.Query) != "" {
		client := &http.Client{Timeout: 15 * time.Second}
		for _, base := range indexes(cfg, opts.LookupEnv) {
			hits, err := catalog.QueryAPI(ctx, client, base, opts.Query, catalog.DefaultLimit)
			if err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", workspace.EscapeTerminal(err.Error()))
				continue
			}
			found = append(found, hits...)
		}
	}
	ranked := catalog.Rank(opts.Query, catalog.Merge(catalog.Installed(entries, lastAudit(cfg.Home)), found))
	if opts.Limit > 0 && len(ranked) > opts.Limit {
		ranked = ranked[:opts.Limit]
	}
	if opts.JSON {
		if ranked == nil {
			ranked = []catalog.Skill{}
		}
		return writeJSON(opts.IO.Out, ranked)
	}
	if len(ranked) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no skill matches %q\n", opts.Query)
		return nil
	}
	for i, s := range ranked {
		if i > 0 {
			fmt.Fprintln(opts.IO.Out)
		}
		writeHit(opts.IO, s)
	}
	fmt.Fprintf(opts.IO.ErrOut, "\n%d skill(s); install one with 'agent skill add <id>'\n", len(ranked))
	return nil
}

// writeHit prints one search hit as a few lines.
func writeHit(ios *IOStreams, s catalog.Skill) {
	esc := workspace.EscapeTerminal
	head := esc(s.Name)
	if s.Version != "" {
		head += " " + esc(s.Version)
	}
	var marks []string
	if s.Installed {
		marks = append(marks, "installed")
	}
	if s.Signed {
		marks = append(marks, "signed by "+esc(s.Signer))
	}
	if s.Installs > 0 {
		marks = append(marks, fmt.Sprintf("%d installs", s.Installs))
	}
	if len(marks) > 0 {
		head += " (" + strings.Join(marks, ", ") + ")"
	}
	fmt.Fprintln(ios.Out, head)
	if s.Description != "" {
		fmt.Fprintf(ios.Out, "  %s\n", esc(workspace.FirstLine(s.Description, 100)))
	}
	fmt.Fprintf(ios.Out, "  id: %s\n", esc(s.ID))
	if s.Audit != "" {
		fmt.Fprintf(ios.Out, "  audit: %s\n", esc(s.Audit))
	}
	p := s.Permissions
	var needs []string
	for _, part := range []struct {
		what string
		list []string
	}{{"reads", p.FSRead}, {"writes", p.FSWrite}, {"network", p.Network}, {"env", p.Env}} {
		if len(part.list) > 0 {
			needs = append(needs, part.what+" "+esc(strings.Join(part.list, " ")))
		}
	}
	if len(needs) > 0 {
		fmt.Fprintf(ios.Out, "  needs: %s\n", strings.Join(needs, "; "))
	}
}
