package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/catalog"
	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/httpguard"
	"github.com/agentskills/agent/registry"
)

// defaultCatalogAddr is where agent catalog serve listens without --http.
const defaultCatalogAddr = "127.0.0.1:8765"

type catalogOptions struct {
	IO     *IOStreams
	Config func() (*Config, error)
	Store  func() (*registry.Store, error)

	DB       string
	Addr     string
	AddrFile string
	Token    string
	Every    time.Duration
}

func newCmdCatalog(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "A team's skill catalog: an index of the configured sources, a web page and the search API",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdCatalogServe(f, nil), newCmdCatalogRefresh(f, nil))
	return cmd
}

func (o *catalogOptions) dbPath() (string, error) {
	if o.DB != "" {
		return o.DB, nil
	}
	cfg, err := o.Config()
	if err != nil {
		return "", err
	}
	return filepath.Join(cfg.Home, "catalog", "catalog.db"), nil
}

func addCatalogDBFlag(cmd *cobra.Command, opts *catalogOptions) {
	cmd.Flags().StringVar(&opts.DB, "db", "", "the index's SQLite `file` (default $AGENT_HOME/catalog/catalog.db)")
}

func newCmdCatalogServe(f *Factory, runF func(context.Context, *catalogOptions) error) *cobra.Command {
	opts := &catalogOptions{IO: f.IO, Config: f.Config, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the catalog: a web page, the skills.sh search API and the well-known index",
		Long: dedent(`
			Index the skills of the sources: in config.yaml (git sources and
			OCI registries, as agent skill search reads them) into an SQLite
			database with a full-text index, and serve it over HTTP:

			  /                            the web page: search, a page per skill
			  /api/search?q=&limit=        the skills.sh search API, for
			                               SKILLS_API_URL=http://ADDR npx skills find
			                               and indexes: in another agent's config
			  /.well-known/agent-skills/   the discovery index, for
			                               agent skill add http://ADDR and
			                               npx skills add http://ADDR
			  POST /api/refresh            index the sources again now

			The index is rebuilt every --refresh and on demand, in one
			transaction: a refresh that fails or is killed leaves the last
			complete index served. The server only reads. It listens on
			loopback unless --http names another address; a browser's request
			from another site (Origin) and a loopback request under a foreign
			Host are refused, as for agent mcp --http. With --token (or
			AGENT_CATALOG_TOKEN) every request must carry it: a bearer token, or
			open the page once with ?token=.

			Guide: docs/catalog.md.
		`),
		Example: dedent(`
			$ agent catalog serve
			$ agent catalog serve --http 0.0.0.0:8765 --token "$(openssl rand -hex 16)"
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Token == "" {
				opts.Token = f.getenv("AGENT_CATALOG_TOKEN")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return catalogServeRun(cmd.Context(), opts)
		},
	}
	addCatalogDBFlag(cmd, opts)
	cmd.Flags().StringVar(&opts.Addr, "http", defaultCatalogAddr, "listen on `ADDR` (host:port)")
	cmd.Flags().StringVar(&opts.AddrFile, "addr-file", "", "once listening, write the address to `file` (for scripts; --http 127.0.0.1:0 picks a free port)")
	cmd.Flags().StringVar(&opts.Token, "token", "", "ask every request for this bearer `token`")
	cmd.Flags().DurationVar(&opts.Every, "refresh", 15*time.Minute, "index the sources again every `DURATION` (0: only on demand)")
	return cmd
}

func newCmdCatalogRefresh(f *Factory, runF func(context.Context, *catalogOptions) error) *cobra.Command {
	opts := &catalogOptions{IO: f.IO, Config: f.Config, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "refresh",
		Short: "Index the configured sources into the catalog now",
		Long: dedent(`
			Index the skills of the sources: in config.yaml into the catalog's
			database, as agent catalog serve does on its schedule. A running
			server serves the new index at once. If a source cannot be read,
			the last complete index stays.
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return catalogRefreshRun(cmd.Context(), opts)
		},
	}
	addCatalogDBFlag(cmd, opts)
	return cmd
}

func openCatalog(opts *catalogOptions) (*catalog.DB, error) {
	p, err := opts.dbPath()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("open the catalog: %w", err)
	}
	return catalog.Open(p)
}

// refresher indexes the configured sources into db: every source, or the
// index stays as it was.
func refresher(opts *catalogOptions, db *catalog.DB) func(context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := opts.Config()
		if err != nil {
			return err
		}
		store, err := opts.Store()
		if err != nil {
			return err
		}
		if len(cfg.Sources) == 0 {
			return fmt.Errorf("no sources: in %s; list the git repositories and oci:// registries to index", filepath.Join(cfg.Home, "config.yaml"))
		}
		c := collector(store, cfg, opts.IO)
		skills, errs := c.Sources(ctx, cfg.Sources)
		if len(errs) > 0 {
			return fmt.Errorf("refresh the catalog (the last complete index stays): %w", errors.Join(errs...))
		}
		return db.Replace(ctx, skills, time.Now())
	}
}

func catalogRefreshRun(ctx context.Context, opts *catalogOptions) error {
	db, err := openCatalog(opts)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := refresher(opts, db)(ctx); err != nil {
		return err
	}
	_, n, err := db.Refreshed(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Indexed %d skill(s)\n", n)
	return nil
}

func catalogServeRun(ctx context.Context, opts *catalogOptions) error {
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return usageErr(fmt.Errorf("--http %q: want HOST:PORT: %w", opts.Addr, err))
	}
	db, err := openCatalog(opts)
	if err != nil {
		return err
	}
	defer db.Close()
	refresh := refresher(opts, db)
	// A catalog that was never filled is filled before it serves; one
	// that was is served at once and refreshed behind.
	at, _, err := db.Refreshed(ctx)
	if err != nil {
		return err
	}
	if at.IsZero() {
		if err := refresh(ctx); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	addr := ln.Addr().String()
	if opts.AddrFile != "" {
		if err := atomicfile.Write(opts.AddrFile, []byte(addr+"\n"), 0o644); err != nil {
			ln.Close()
			return err
		}
	}
	if !httpguard.Loopback(host) && opts.Token == "" {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s is not a loopback address and no --token is set: anyone who reaches it can read the catalog\n", host)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Serving the catalog at http://%s/ (search API: SKILLS_API_URL=http://%s)\n", addr, addr)
	srv := &http.Server{
		Handler:           catalog.Handler(catalog.ServerOptions{DB: db, Token: opts.Token, Refresh: refresh}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	if opts.Every > 0 {
		go func() {
			t := time.NewTicker(opts.Every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := refresh(ctx); err != nil && ctx.Err() == nil {
						fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", err)
					}
				}
			}
		}()
	}
	return httpguard.Serve(ctx, srv, ln)
}
