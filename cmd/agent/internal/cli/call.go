package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/sdk"
)

// Codes `agent call` adds to the tool error codes for host-side failures.
const (
	codePluginTampered = "plugin_tampered"
	codePluginStart    = "plugin_start_failed"
	codeHostError      = "host_error"
)

type callOptions struct {
	IO        *IOStreams
	Workspace func(context.Context) (*Workspace, error)

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
			$ agent call hello-extended.greet '{"name":"Ada"}'
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
		return notActiveError(ws, opts.Tool)
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

// callError maps an Invoke error to a code and a message that says what to
// do next.
func callError(ctx context.Context, t *ToolRef, err error) (code, msg string) {
	var se *sdk.Error
	switch {
	case errors.As(err, &se):
		return se.Code, se.Message
	case errors.Is(err, host.ErrTampered):
		return codePluginTampered, fmt.Sprintf("%v; the plugin binary of %s changed after it was installed and was not run. Reinstall the skill: 'agent skill remove %s --yes', then 'agent skill add' it again", err, t.Skill, t.Skill)
	case errors.Is(err, host.ErrStart):
		return codePluginStart, fmt.Sprintf("%v; %s", err, strings.ReplaceAll(startAdvice, "<name>", t.Skill))
	case ctx.Err() != nil:
		return sdk.CodeCanceled, err.Error()
	}
	return codeHostError, describe(err)
}

// inactiveWithScripts lists installed skills that are not active and have
// scripts, to say which one to activate for the script tools.
func inactiveWithScripts(ws *Workspace) []registry.Entry {
	var out []registry.Entry
	for _, e := range ws.All {
		if ws.Skill(e.Canonical) != nil || e.Path == "" || !dirExists(e.Path) {
			continue
		}
		m, _, err := loadManifest(e)
		if err != nil {
			continue
		}
		if scripts, err := exec.List(e.Path, m.Scripts, m.ScriptsIgnore); err == nil && len(scripts) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// notActiveError explains why a tool name did not resolve: which installed
// skill has it and how to activate that skill.
func notActiveError(ws *Workspace, name string) error {
	bare, wantSkill := name, ""
	if skill, tool, ok := strings.Cut(name, "."); ok {
		bare = tool
		if c, err := registry.Canonical(skill); err == nil {
			wantSkill = c
		}
	}
	var owners []registry.Entry
	for _, e := range ws.All {
		if ws.Skill(e.Canonical) != nil || (wantSkill != "" && e.Canonical != wantSkill) {
			continue
		}
		for _, t := range e.Tools {
			if t.Name == bare {
				owners = append(owners, e)
				break
			}
		}
	}
	if len(owners) == 0 && (bare == "script_list" || bare == "script_help" || bare == "script_run") {
		owners = inactiveWithScripts(ws)
		if len(owners) == 0 {
			return &kindError{msg: fmt.Sprintf("%s: no installed skill has scripts; 'agent skill list' shows what is installed", name), kind: errUnknownTool}
		}
	}
	if len(owners) == 0 {
		return &kindError{msg: fmt.Sprintf("%s is not a tool of any active or installed skill; 'agent tools' lists the active ones", name), kind: errUnknownTool}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tool %s is not active;", name)
	for _, e := range owners {
		if e.Trusted {
			fmt.Fprintf(&b, " skill %s provides it: export AGENT_SKILLS=%s (or AGENT_SKILLS=all).", e.Canonical, e.Canonical)
		} else {
			fmt.Fprintf(&b, " skill %s (untrusted) provides it: 'agent skill trust %s' and export AGENT_SKILLS=%s, or export AGENT_SKILLS=all-untrusted.", e.Canonical, e.Canonical, e.Canonical)
		}
	}
	return &kindError{msg: strings.TrimSuffix(b.String(), "."), kind: errToolNotActive}
}
