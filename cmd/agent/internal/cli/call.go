package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/workspace"
	"github.com/agentskills/agent/sdk"
)

type callOptions struct {
	IO        *IOStreams
	Workspace func(context.Context) (*workspace.Workspace, error)

	Tool    string
	Args    string        // JSON, "-" for stdin, "" for {}
	Timeout time.Duration // 0: the default of callDeadline
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
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up on the call after this long (default: 5m, or AGENT_SCRIPT_TIMEOUT+15s if longer)")
	return cmd
}

// callDeadline bounds one call, so that a hung plugin cannot hang the agent.
// Scripts have their own limit; the call's must outlast it so that the
// script plugin reports the script's timeout rather than being killed.
func callDeadline(flag, scriptTimeout time.Duration) time.Duration {
	if flag > 0 {
		return flag
	}
	return max(5*time.Minute, scriptTimeout+15*time.Second)
}

func readCallArgs(opts *callOptions) (json.RawMessage, error) {
	raw := []byte(opts.Args)
	if opts.Args == "-" {
		b, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = err.Error()
		}
		return nil, usageErr(fmt.Errorf("the arguments must be a JSON object such as '{\"name\": \"Ada\"}': %s", why))
	}
	return json.RawMessage(raw), nil
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
	t, ok := ws.Tool(opts.Tool)
	if !ok {
		err := ws.Unresolved(opts.Tool)
		var se *sdk.Error
		if errors.As(err, &se) {
			// A refusal such as permission_denied is a call result.
			if werr := writeCallJSON(opts.IO, callFailure{Error: se.Code, Message: se.Message}); werr != nil {
				return werr
			}
			return errSilent
		}
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callDeadline(opts.Timeout, ws.Config.ScriptTimeout))
	defer cancel()
	res, err := ws.Invoke(ctx, t, args)
	if err != nil {
		code, msg := callError(ctx, t, err)
		if werr := writeCallJSON(opts.IO, callFailure{Error: code, Message: msg}); werr != nil {
			return werr
		}
		return errSilent
	}
	value := res.Value
	if len(bytes.TrimSpace(value)) == 0 {
		value = json.RawMessage("null")
	}
	return writeCallJSON(opts.IO, callSuccess{Success: true, Result: value, Message: res.Message})
}

func writeCallJSON(ios *IOStreams, v any) error {
	if ios.StdoutTTY {
		return writeJSON(ios.Out, v)
	}
	enc := json.NewEncoder(ios.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// callError is workspace.Failure with this command's advice on host errors.
func callError(ctx context.Context, t *workspace.ToolRef, err error) (code, msg string) {
	code, msg = workspace.Failure(ctx, t, err)
	if code == workspace.CodeHostError {
		msg = describe(err)
	}
	return code, msg
}
