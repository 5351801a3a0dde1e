package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/internal/app/placement"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/telemetry"
	"github.com/agentskills/agent/registry"
)

type mcpOptions struct {
	IO      *IOStreams
	Factory *Factory

	HTTP        string
	Token       string
	Lazy        bool
	IdleTimeout time.Duration
	CallTimeout time.Duration
}

func newCmdMCP(f *Factory, runF func(context.Context, *mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the active skills to an MCP client (Claude Code, Cursor, VS Code, Codex)",
		Long: dedent(`
			Serve the skills AGENT_SKILLS activates over the Model Context Protocol.
			Tools are every active skill's tools, use_skill and the script tools;
			prompts are the skills a person may invoke; resources are the skills'
			files as skill://<name>/<path>. Adding, updating, removing, trusting or
			untrusting a skill while serving tells the client that the lists
			changed.

			stdio is the default: the client starts 'agent mcp' and speaks on its
			stdin and stdout; logs go to stderr (AGENT_LOG_LEVEL). The server ends
			when the client closes stdin or on SIGTERM, and stops every plugin.

			--http 127.0.0.1:PORT serves streamable HTTP at /mcp on loopback only.
			Every request needs 'Authorization: Bearer <token>': --token, or the
			token kept in $AGENT_HOME/state/mcp-token (made and printed once).
			/metrics, behind the same token, serves Prometheus metrics: tool calls
			by skill, tool and outcome code, their latency, errors by code, and
			plugin starts and restarts.

			--lazy lists only use_skill, call_tool and the script tools: use_skill
			returns a skill's instructions and its tools' schemas, call_tool calls
			them. The client's context then holds the skill list, not every schema.

			A plugin unused for --idle-timeout is stopped and starts again on its
			next call.

			'agent mcp config <client>' prints the snippet that registers the
			server in claude-code, codex, cursor, gemini-cli or vscode.

			An MCP client starts the server with an environment of its own, not
			your shell's: AGENT_SKILLS must be in the client's entry for it
			('mcp config' copies yours). Unset means no skills, as in the CLI;
			the server then says on stderr which skills are off and why.

			Guide: docs/mcp.md.
		`),
		Example: dedent(`
			$ AGENT_SKILLS=all agent mcp
			$ AGENT_SKILLS=all agent mcp --lazy
			$ agent mcp --http 127.0.0.1:8765
			$ AGENT_SKILLS=all agent mcp config claude-code > .mcp.json
		`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve streamable HTTP at `127.0.0.1:PORT`/mcp instead of stdio")
	cmd.Flags().StringVar(&opts.Token, "token", "", "bearer token for --http (default: kept in $AGENT_HOME/state/mcp-token)")
	cmd.Flags().BoolVar(&opts.Lazy, "lazy", false, "list use_skill and call_tool instead of every tool schema")
	cmd.Flags().DurationVar(&opts.IdleTimeout, "idle-timeout", mcp.DefaultIdleTimeout, "stop a plugin unused this long; it restarts on its next call (0: never)")
	cmd.Flags().DurationVar(&opts.CallTimeout, "call-timeout", 0, "give up on one tool call after this long (default: 5m, or for a script AGENT_SCRIPT_TIMEOUT+15s if longer)")
	cmd.AddCommand(newCmdMCPConfig(f, nil))
	return cmd
}

func mcpRun(ctx context.Context, opts *mcpOptions) error {
	f := opts.Factory
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if _, set := f.LookupEnv("GOGC"); !set {
		// go-sdk allocates a fresh 32 KiB JSON decoder buffer for every
		// message it unmarshals (several per tools/call), against a live
		// heap of a few MB: at the default GOGC the server spends about
		// half of a warm call collecting garbage. docs/benchmarks.md has
		// the profile.
		debug.SetGCPercent(mcpGCPercent)
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = -1 // the flag's 0 means never
	}
	log := slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: slogLevel(cfg.LogLevel)}))
	// Only a long-running HTTP server has metrics (SPEC §17): stdio
	// builds no meter provider.
	var metrics *telemetry.Metrics
	if opts.HTTP != "" {
		if metrics, err = telemetry.NewMetrics(ctx, Version); err != nil {
			return err
		}
		defer metrics.Shutdown(context.WithoutCancel(ctx))
	}
	var firstLoad sync.Once
	srv, err := mcp.New(ctx, mcp.Options{
		Load: func(ctx context.Context) (*workspace.Workspace, error) {
			wc, err := f.WorkspaceConfig()
			if err != nil {
				return nil, err
			}
			if metrics != nil {
				wc.Observer = workspace.Observers(wc.Observer, mcp.CallMetrics(metrics))
				wc.PluginStarted = metrics.PluginStarted
			}
			ws, err := workspace.Load(ctx, wc)
			if err == nil && len(ws.Active) == 0 {
				// An empty tools/list with rc 0 tells a user nothing, and
				// the client's log is where they look: say why, once.
				firstLoad.Do(func() {
					if v, verr := f.view(ctx, workspace.Every); verr == nil {
						fmt.Fprint(opts.IO.ErrOut, noActiveHint(v))
					}
				})
			}
			return ws, err
		},
		Home:        cfg.Home,
		Lazy:        opts.Lazy,
		IdleTimeout: idle,
		CallTimeout: opts.CallTimeout,
		Version:     Version,
		Logger:      log.With("component", "mcp"),
	})
	if err != nil {
		return err
	}
	if opts.HTTP == "" {
		if _, set := f.LookupEnv("GOMAXPROCS"); !set {
			// One stdio session is I/O: a line in, a gRPC call to a
			// plugin, a line out. With more Ps every goroutine hand-off
			// on the way wakes an idle thread that spins and parks again;
			// one P cut a warm tools/call by about a tenth of the host's
			// call on 2 cores (docs/benchmarks.md). Plugins, the base
			// tools among them, are processes of their own and keep theirs.
			runtime.GOMAXPROCS(1)
		}
		return srv.ServeStdio(ctx)
	}
	token := opts.Token
	stateDir := filepath.Join(cfg.Home, "state")
	generated := false
	if token == "" {
		if token, err = mcp.LoadToken(stateDir); err != nil {
			srv.Close()
			return err
		}
	}
	if token == "" {
		if token, err = mcp.NewToken(); err != nil {
			srv.Close()
			return err
		}
		generated = true
	}
	return srv.ServeHTTP(ctx, mcp.HTTPOptions{
		Addr:    opts.HTTP,
		Token:   token,
		Metrics: metrics.Handler(),
		Ready: func(addr string) error {
			// Only once the address is ours: a refused bind writes nothing.
			if generated {
				if err := mcp.SaveToken(stateDir, token); err != nil {
					return err
				}
				fmt.Fprintf(opts.IO.ErrOut, "agent mcp: generated a bearer token (kept in %s): %s\n", filepath.Join(stateDir, mcp.TokenFile), token)
			}
			fmt.Fprintf(opts.IO.ErrOut, "agent mcp: serving http://%s%s\n", addr, mcp.Path)
			return nil
		},
	})
}

// noActiveHint is what `agent mcp` says on stderr when it serves no
// skill: the installed skills and why each is off, and that the client,
// not the user's shell, gives the server its environment.
func noActiveHint(v *workspace.View) string {
	var b strings.Builder
	spec := v.Spec
	if strings.TrimSpace(spec) == "" {
		spec = "(not set)"
	}
	fmt.Fprintf(&b, "agent mcp: no skill is active, so the client gets no skill tools (AGENT_SKILLS=%s in this server's environment).\n", spec)
	b.WriteString("  An MCP client starts its servers with an environment of its own, not your shell's: set AGENT_SKILLS (and AGENT_HOME) in the client's entry for this server; 'agent mcp config <client> --write' writes the ones of your shell.\n")
	var off []string
	for _, s := range v.Skills {
		if s.Active || s.Entry.Source == registry.SourceBundled {
			continue
		}
		why := "not in AGENT_SKILLS"
		switch s.Reason {
		case workspace.ReasonUntrusted:
			why = "untrusted; 'agent skill trust " + s.Entry.Canonical + "' trusts it"
		case workspace.ReasonIncompatible:
			why = "incompatible with this agent version"
		case workspace.ReasonLoadFailed:
			why = "failed to load; 'agent check' says why"
		}
		off = append(off, fmt.Sprintf("    %s: %s\n", s.Entry.Canonical, why))
	}
	if len(off) == 0 {
		b.WriteString("  No skill is installed: 'agent skill add <source> --trust' installs one.\n")
		return b.String()
	}
	b.WriteString("  Installed but inactive:\n")
	for _, l := range off {
		b.WriteString(l)
	}
	return b.String()
}

func slogLevel(s string) slog.Level {
	switch s {
	case "trace", "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	}
	return slog.LevelWarn
}

// mcpGCPercent is agent mcp's GOGC unless the environment sets one.
const mcpGCPercent = 400

type mcpConfigOptions struct {
	IO      *IOStreams
	Factory *Factory

	Client string
	Lazy   bool
	Write  bool
}

func newCmdMCPConfig(f *Factory, runF func(context.Context, *mcpConfigOptions) error) *cobra.Command {
	opts := &mcpConfigOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "config <claude-code|codex|cursor|gemini-cli|vscode>",
		Short: "Print the snippet that registers 'agent mcp' in an MCP client",
		Long: dedent(`
			Print the configuration that makes an MCP client start this agent
			binary as the server "agent", with the AGENT_SKILLS and AGENT_HOME of
			this shell. Where the snippet goes is printed on stderr.

			The clients go by the names of 'agent skill agents' (claude-code,
			codex, cursor, gemini-cli; github-copilot is vscode); claude and
			gemini work too.

			--write puts it there: the project's .mcp.json (claude-code; never
			~/.claude.json, which a running Claude Code rewrites),
			.cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json, or
			~/.codex/config.toml. Other keys and comments are kept, running it
			again changes nothing, and the file it replaces is kept as
			<file>.bak. It then prints the client's own one-time approval step
			(Claude Code approves a project server once; Gemini CLI reads
			project settings only in a trusted folder).

			Guide: docs/mcp.md.
		`),
		Example: dedent(`
			$ AGENT_SKILLS=all agent mcp config claude-code > .mcp.json
			$ agent mcp config codex --lazy >> ~/.codex/config.toml
			$ AGENT_SKILLS=all agent mcp config gemini-cli --write
		`),
		Args: exactArgs(1, "a client (claude-code, codex, cursor, gemini-cli or vscode)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Client = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpConfigRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Lazy, "lazy", false, "register the server with --lazy")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "write it into the client's configuration file (a backup is kept)")
	return cmd
}

func mcpConfigRun(_ context.Context, opts *mcpConfigOptions) error {
	f := opts.Factory
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	client, err := mcpClientOf(opts.Client)
	if err != nil {
		return usageErr(err)
	}
	l, err := f.mcpLaunch(cfg, cfg.Skills, opts.Lazy)
	if err != nil {
		return err
	}
	snippet, where, err := mcp.ClientConfig(client, l)
	if err != nil {
		return usageErr(err)
	}
	if opts.Write {
		env, err := f.placementEnv()
		if err != nil {
			return err
		}
		t, err := mcp.ConfigTargetOf(client, env.Project, env.Home)
		if err != nil {
			return usageErr(err)
		}
		changed, backup, err := mcp.WriteConfig(client, t, l)
		if err != nil {
			return err
		}
		switch {
		case !changed:
			fmt.Fprintf(opts.IO.ErrOut, "%s already registers the server \"agent\" this way; nothing changed\n", t.Path)
		case backup != "":
			fmt.Fprintf(opts.IO.ErrOut, "Registered the server \"agent\" in %s (the previous file is %s)\n", t.Path, backup)
		default:
			fmt.Fprintf(opts.IO.ErrOut, "Registered the server \"agent\" in %s\n", t.Path)
		}
		if step := mcp.NextStep(client, env.Project); step != "" {
			fmt.Fprintf(opts.IO.ErrOut, "next: %s\n", step)
		}
	} else {
		fmt.Fprint(opts.IO.Out, snippet)
		fmt.Fprintf(opts.IO.ErrOut, "Put this in %s.\n", where)
	}
	if cfg.Skills == "" {
		fmt.Fprintln(opts.IO.ErrOut, "warning: AGENT_SKILLS is not set, so the server would serve no skills; run again with AGENT_SKILLS=all (or the skills to serve)")
	}
	return nil
}

// mcpClientOf is the MCP client a name means: an agent of 'agent skill
// agents' or its alias (claude-code, claude), or a client's own name
// (vscode), so that one name works everywhere.
func mcpClientOf(name string) (string, error) {
	if a, ok := placement.ByName(name); ok && a.MCP != "" {
		return a.MCP, nil
	}
	for _, c := range mcp.Clients {
		if strings.EqualFold(name, c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w %q; choose one of claude-code, codex, cursor, gemini-cli or vscode (github-copilot)", mcp.ErrUnknownClient, name)
}

// mcpLaunch is how a client starts this binary as the MCP server "agent",
// serving skills (AGENT_SKILLS; "" leaves it out) from this AGENT_HOME.
func (f *Factory) mcpLaunch(cfg *Config, skills string, lazy bool) (mcp.Launch, error) {
	self, err := f.Executable()
	if err != nil {
		return mcp.Launch{}, fmt.Errorf("find the agent binary: %w", err)
	}
	l := mcp.Launch{Command: self, Args: []string{"mcp"}, Env: map[string]string{}}
	if lazy {
		l.Args = append(l.Args, "--lazy")
	}
	if skills != "" {
		l.Env["AGENT_SKILLS"] = skills
	}
	if v, ok := f.LookupEnv("AGENT_HOME"); ok && v != "" {
		l.Env["AGENT_HOME"] = cfg.Home
	}
	return l, nil
}

// registerPlacedMCP registers `agent mcp` in client's configuration for a
// placed skill with Go tools (SPEC §19): the agent reads the skill's
// SKILL.md from its folder, and reaches its tools over MCP. The server
// serves AGENT_SKILLS=all, every trusted skill, which every placed skill
// is. A configuration that already names a server "agent" is left as the
// user wrote it. It returns the file and whether it was written.
func (f *Factory) registerPlacedMCP(client string) (path string, wrote bool, err error) {
	cfg, err := f.Config()
	if err != nil {
		return "", false, err
	}
	env, err := f.placementEnv()
	if err != nil {
		return "", false, err
	}
	t, err := mcp.ConfigTargetOf(client, env.Project, env.Home)
	if err != nil {
		return "", false, err
	}
	if has, err := mcp.HasServer(t); err != nil || has {
		return t.Path, false, err
	}
	l, err := f.mcpLaunch(cfg, "all", false)
	if err != nil {
		return "", false, err
	}
	changed, _, err := mcp.WriteConfig(client, t, l)
	return t.Path, changed, err
}

// unregisterPlacedMCP takes out of client's file in project the server
// registerPlacedMCP wrote, when it is still exactly that entry.
func (f *Factory) unregisterPlacedMCP(client, project string) (path string, removed bool, err error) {
	cfg, err := f.Config()
	if err != nil {
		return "", false, err
	}
	t, err := mcp.ConfigTargetOf(client, project, "")
	if err != nil {
		return "", false, err
	}
	l, err := f.mcpLaunch(cfg, "all", false)
	if err != nil {
		return "", false, err
	}
	removed, err = mcp.RemoveServer(client, t, l)
	return t.Path, removed, err
}
