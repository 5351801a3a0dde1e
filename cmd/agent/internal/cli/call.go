package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/workspace"
)

type callOptions struct {
	IO        *IOStreams
	Workspace func(context.Context) (*workspace.Workspace, error)

	Tool    string
	Args    string        // JSON, "-" for stdin, "" for {}
	Timeout time.Duration // 0: the call path's deadline policy
}

func newCmdCall(f *Factory, runF func(context.Context, *callOptions) error) *cobra.Command {
	opts := &callOptions{IO: f.IO, Workspace: f.loadWorkspace}
	cmd := &cobra.Command{
		Use:   "call <tool|skill.tool> [JSON|-]",
		Short: "Call a tool and print its JSON result",
		Long: dedent(`
			Call one tool of an active skill, the way a model would, and print the
			result as JSON on stdout:

			  {"success": true, "result": ..., "message": "..."}
			  {"success": false, "error": "CODE", "message": "..."}

			The arguments are a JSON object given as the second argument, or read
			from stdin when it is '-'; they default to {}. The exit status is 1
			when the call did not succeed.

			A bare tool name picks the first skill (in name order) that defines
			it; skill.tool picks exactly one. The skill must be active: see
			AGENT_SKILLS in 'agent tools --help'. The plugin is started for the
			call, after its binary's sha256 is checked against the registry.
		`),
		Example: dedent(`
			$ AGENT_SKILLS=hello-extended agent call greet_in_language '{"name":"Ada","language":"fr"}'
			$ echo '{"skill_name":"hello-extended"}' | agent call script_list -
			$ agent call hello-extended.greet_multiple '{"names":["Ada","Alan"],"language":"de"}'
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr(fmt.Errorf("%s needs a <tool> and optionally its JSON arguments; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tool = args[0]
			if len(args) > 1 {
				opts.Args = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return callRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up on the call after this long (default: 5m, or for a script AGENT_SCRIPT_TIMEOUT+15s if longer)")
	return cmd
}

// readCallArgs reads the arguments from the command line or stdin; the
// call path decides whether they are an object.
func readCallArgs(opts *callOptions) (json.RawMessage, error) {
	if opts.Args != "-" {
		return json.RawMessage(opts.Args), nil
	}
	b, err := io.ReadAll(opts.IO.In)
	if err != nil {
		return nil, fmt.Errorf("read arguments from stdin: %w", err)
	}
	return json.RawMessage(b), nil
}

// callSuccess and callFailure are the two shapes `agent call` prints; the
// field order is the one of SPEC §9.
type callSuccess struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Message string          `json:"message"`
}

type callFailure struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

func callRun(ctx context.Context, opts *callOptions) error {
	args, err := readCallArgs(opts)
	if err != nil {
		return err
	}
	ws, err := opts.Workspace(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	ws.PrintWarnings(opts.IO.ErrOut)
	out := ws.Call(ctx, opts.Tool, args, workspace.CallOptions{Timeout: opts.Timeout})
	if !out.OK() {
		msg := out.Message
		if out.Code == workspace.CodeHostError && out.Err != nil {
			msg = describe(out.Err)
		}
		if werr := writeCallJSON(opts.IO, callFailure{Error: out.Code, Message: msg}); werr != nil {
			return werr
		}
		return errSilent
	}
	return writeCallJSON(opts.IO, callSuccess{Success: true, Result: out.Value, Message: out.Message})
}

func writeCallJSON(ios *IOStreams, v any) error {
	if ios.StdoutTTY {
		return writeJSON(ios.Out, v)
	}
	enc := json.NewEncoder(ios.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
