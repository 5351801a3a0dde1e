package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry/manifest"
)

// Main runs the agent CLI on the process's own streams and returns the exit
// code: 0 success, 1 failure, 2 usage error.
func Main() int {
	holdGC()
	return Run(context.Background(), NewFactory(System()), os.Args[1:])
}

// Run executes one command line. Tests call it with a Factory over buffers.
func Run(ctx context.Context, f *Factory, args []string) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	ctx, tr := startTracing(ctx, f, root, args)
	err := root.ExecuteContext(ctx)
	code := exitCode(f.IO, err)
	tr.end(f, code, err)
	return code
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "agent",
		Short: "Install, run and inspect skills for AI agents",
		Long: `agent installs skills from git, pins each to a commit, and runs their Go
plugins and PEP 723 scripts for an AI agent.

Start with:
  agent skill add <git-url> --trust   install a skill
  export AGENT_SKILLS=all             activate trusted skills
  agent tools                          see what the model can call
  agent call <tool> '{"arg": 1}'       call one`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// agent --version prints what agent version prints.
		Version: Version,
		// Before any command: the collector is back to the default unless
		// the command is a short listing (gc.go).
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { releaseGC(cmd) },
	}
	root.SetVersionTemplate(versionText())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(flagTypo(c, err)) })

	skill := &cobra.Command{
		Use:   "skill",
		Short: "Manage installed skills (add, update, remove, list, info, trust)",
		// With a RunE cobra no longer prints help and exits 0 for an
		// unknown subcommand (agent skill lsit): it is a usage error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.AddCommand(skill, holdsGC(newCmdVersion(f, nil)))
	// Each group of commands registers itself from its own files.
	addSkillCommands(skill, f)
	addToolCommands(root, f)
	addDisclosureCommands(root, skill, f)
	return root
}

// usageError marks a bad command line: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErr(err error) error { return &usageError{err} }

// errSilent is returned by a command that has already told the user what went
// wrong (for example `agent call` printing a failed result).
var errSilent = errors.New("silent failure")

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr(fmt.Errorf("%q takes no arguments, got %q; see '%s --help'", cmd.CommandPath(), args[0], cmd.CommandPath()))
	}
	return nil
}

// unknownCommand is the usage error for `agent skill lsit`, with cobra's
// suggestion when one is close.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if s := manifest.Suggest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean '%s %s'?", cmd.CommandPath(), s)
	} else if other := commandElsewhere(cmd.Root(), name); other != "" {
		// `agent skill check` for `agent check`: the name is right, the
		// group is not.
		msg += fmt.Sprintf("; did you mean '%s'?", other)
	}
	return usageErr(fmt.Errorf("%s; see '%s --help'", msg, cmd.CommandPath()))
}

// commandElsewhere is the path of the command named name anywhere under
// root, "" when there is none.
func commandElsewhere(root *cobra.Command, name string) string {
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if c.Name() == name || c.HasAlias(name) {
			return c.CommandPath()
		}
		if p := commandElsewhere(c, name); p != "" {
			return p
		}
	}
	return ""
}

// exactArgs is cobra.ExactArgs with a usage error and a hint.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr(fmt.Errorf("%s needs %s; see '%s --help'", cmd.CommandPath(), what, cmd.CommandPath()))
		}
		return nil
	}
}

func exitCode(ios *IOStreams, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errSilent) {
		return 1
	}
	var es *exitStatus
	if errors.As(err, &es) {
		fmt.Fprintf(ios.ErrOut, "agent: %s\n", workspace.EscapeTerminal(describe(err)))
		return es.code
	}
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(ios.ErrOut, "agent: %s\n", workspace.EscapeTerminal(err.Error()))
		return 2
	}
	fmt.Fprintf(ios.ErrOut, "agent: %s\n", workspace.EscapeTerminal(describe(err)))
	return 1
}

// flagTypo adds the nearest flag of c to an unknown-flag error:
// "unknown flag: --trus; did you mean --trust?".
func flagTypo(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	if s := manifest.Suggest(name, names); s != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return err
}
