package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/app/workspace"
)

type runOptions struct {
	IO        *IOStreams
	Config    func() (*Config, error)
	Workspace func(context.Context) (*workspace.Workspace, error)
	LookupEnv func(string) (string, bool)

	Query       string
	Model       string
	MaxSteps    int
	Continue    bool
	ResumeFrom  string
	Instruction string
	Events      string // stdout, none; "" picks by terminal
	Approve     string // ask, never; "" takes config
	Yes         bool
	Stream      bool
}

func newCmdRun(f *Factory, runF func(context.Context, *runOptions) error) *cobra.Command {
	opts := &runOptions{IO: f.IO, Config: f.Config, LookupEnv: f.LookupEnv}
	opts.Workspace = func(ctx context.Context) (*workspace.Workspace, error) {
		wc, err := f.WorkspaceConfig()
		if err != nil {
			return nil, err
		}
		wc.Always = []string{workspace.BaseSkill}
		return workspace.Load(ctx, wc)
	}
	cmd := &cobra.Command{
		Use:   "run [flags] \"query\"",
		Short: "Run the agent on a task with the active skills",
		Long: dedent(`
			Run an LLM agent loop on a task: the model reasons, calls the tools of
			the active skills and of the base skill (several at once when it asks),
			and every step is checkpointed under .agent/jobs in the workspace
			(AGENT_WORKSPACE, else the current folder), so that a stopped job
			resumes with --continue. The run ends when attempt_completion finds
			no open todo, at --max-steps, or on Ctrl-C.

			A query "/name args" invokes that skill as a person would. A skill
			with context: fork runs as a delegated run of the same job.

			Models: anthropic/MODEL (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) and
			openai/MODEL (OPENAI_API_KEY, OPENAI_BASE_URL, which also reaches
			local OpenAI-compatible servers such as Ollama, vLLM or llama.cpp).
			model: in config.yaml is the default.

			Events go to stdout as JSON lines when stdout is not a terminal
			(--events=stdout|none); otherwise a progress view is shown on
			stderr and the result is printed on stdout.

			Guide: docs/run.md.
		`),
		Example: dedent(`
			$ agent run --model anthropic/claude-sonnet-4-5 "add a README section about config"
			$ agent run "/hello-extended Ada fr"
			$ agent run --continue
			$ OPENAI_BASE_URL=http://localhost:11434/v1 agent run --model openai/llama3.2 "list the Go files"
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.TrimSpace(strings.Join(args, " "))
			switch {
			case opts.Continue && opts.ResumeFrom != "":
				return usageErr(errors.New("--continue and --resume-from exclude each other"))
			case opts.Query == "" && !opts.Continue && opts.ResumeFrom == "":
				return usageErr(fmt.Errorf("%s needs a query, or --continue; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			case opts.Events != "" && opts.Events != "stdout" && opts.Events != "none":
				return usageErr(fmt.Errorf("--events must be stdout or none, got %q", opts.Events))
			case opts.Approve != "" && opts.Approve != "ask" && opts.Approve != "never":
				return usageErr(fmt.Errorf("--approve must be ask or never, got %q", opts.Approve))
			case opts.MaxSteps < 0:
				return usageErr(fmt.Errorf("--max-steps must be positive, got %d", opts.MaxSteps))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Model, "model", "", "PROVIDER/MODEL, for example anthropic/claude-sonnet-4-5 or openai/gpt-4.1 (default: model: in config.yaml)")
	fl.IntVar(&opts.MaxSteps, "max-steps", 0, "stop the job after this many steps, delegated runs included (0: no limit)")
	fl.BoolVar(&opts.Continue, "continue", false, "resume the last job from its last checkpoint")
	fl.StringVar(&opts.ResumeFrom, "resume-from", "", "resume from this checkpoint id")
	fl.StringVar(&opts.Instruction, "instruction", "", "the system prompt's opening (default: instruction: in config.yaml)")
	fl.StringVar(&opts.Events, "events", "", "stdout: JSON lines on stdout; none: a progress view on stderr (default: stdout unless stdout is a terminal)")
	fl.StringVar(&opts.Approve, "approve", "", "ask: ask before exec, shell_command, write_file, edit_file, apply_patch; never: do not ask (default: approve: in config.yaml, else ask)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "run the tools that need approval without asking")
	fl.BoolVar(&opts.Stream, "stream", true, "stream the model's replies")
	return cmd
}

// Exit status of a run that stopped without completing.
const (
	exitMaxSteps    = 3
	exitInterrupted = 130
)

// exitStatus is an error that has been reported and carries its exit code.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string { return e.err.Error() }
func (e *exitStatus) Unwrap() error { return e.err }

func runRun(ctx context.Context, opts *runOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	ws, err := opts.Workspace(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	root, err := ws.Config.WorkspaceRoot()
	if err != nil {
		return fmt.Errorf("find the workspace folder: %w (set AGENT_WORKSPACE)", err)
	}
	ws.PrintWarnings(opts.IO.ErrOut)

	events := opts.Events
	if events == "" {
		events = "stdout"
		if opts.IO.StdoutTTY {
			events = "none"
		}
	}
	model := opts.Model
	if model == "" && !opts.Continue && opts.ResumeFrom == "" {
		model = cfg.Model
	}
	instruction := opts.Instruction
	if instruction == "" {
		instruction = cfg.Instruction
	}
	co := run.ClientOptions{LookupEnv: opts.LookupEnv, Stream: opts.Stream, MaxRetries: run.DefaultMaxRetries}
	ro := run.Options{
		Workspace:   ws,
		Store:       run.NewStore(root),
		NewModel:    func(spec string) (run.Model, error) { return run.NewModel(spec, co) },
		Model:       model,
		Instruction: instruction,
		MaxSteps:    opts.MaxSteps,
		Approve:     approver(opts, cfg),
		OnEvent:     eventSink(opts.IO, events),
	}
	var out *run.Outcome
	switch {
	case opts.Continue:
		out, err = run.Continue(ctx, ro, opts.Query)
	case opts.ResumeFrom != "":
		out, err = run.ResumeFrom(ctx, ro, opts.ResumeFrom, opts.Query)
	default:
		out, err = run.Start(ctx, ro, opts.Query)
	}
	if out != nil && out.Status == run.StatusCompleted && err == nil {
		if events != "stdout" {
			fmt.Fprintln(opts.IO.Out, out.Result)
		}
		return nil
	}
	if out != nil {
		err = fmt.Errorf("job %s: %w", out.JobID, err)
	}
	switch {
	case errors.Is(err, run.ErrMaxSteps):
		return &exitStatus{exitMaxSteps, err}
	case errors.Is(err, run.ErrInterrupted):
		return &exitStatus{exitInterrupted, err}
	}
	return err
}

// approver asks on a terminal before a tool that changes the workspace.
func approver(opts *runOptions, cfg *Config) func(context.Context, string, string) error {
	mode := opts.Approve
	if mode == "" {
		mode = cfg.Approve
	}
	if opts.Yes || mode == "never" {
		return nil
	}
	var mu sync.Mutex // one question at a time, as concurrent calls ask
	return func(_ context.Context, tool, args string) error {
		if !opts.IO.CanPrompt() {
			return errors.New("there is no terminal to ask on; the user can allow it with --yes or approve: never")
		}
		mu.Lock()
		defer mu.Unlock()
		// args is the whole call as it will run, control characters
		// escaped (workspace.CallOptions.Approve); cutting it would hide
		// what is approved.
		fmt.Fprintf(opts.IO.ErrOut, "allow %s %s? [y/N] ", tool, args)
		ans, err := opts.IO.ReadLine()
		if err != nil {
			return fmt.Errorf("no answer: %w", err)
		}
		if a := strings.ToLower(strings.TrimSpace(ans)); a == "y" || a == "yes" {
			return nil
		}
		return errors.New("refused")
	}
}

// clip shortens s to one line of n runes for the progress view, with
// what a terminal would act on escaped.
func clip(s string, n int) string {
	s = workspace.EscapeControls(strings.ReplaceAll(strings.TrimSpace(s), "\n", " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// eventSink prints events: JSON lines on stdout, or a progress view on
// stderr for a person.
func eventSink(ios *IOStreams, mode string) func(run.Event) {
	var mu sync.Mutex
	if mode == "stdout" {
		enc := json.NewEncoder(ios.Out)
		return func(ev run.Event) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(ev)
		}
	}
	p := &progress{w: ios.ErrOut, runs: map[string]string{}}
	return func(ev run.Event) {
		mu.Lock()
		defer mu.Unlock()
		p.show(ev)
	}
}

// progress is the readable view of a run.
type progress struct {
	w        io.Writer
	runs     map[string]string // run id → indent
	inText   bool
	textStep int
}

func (p *progress) show(ev run.Event) {
	ind, ok := p.runs[ev.RunID]
	if !ok {
		if len(p.runs) > 0 {
			ind = "    "
		}
		p.runs[ev.RunID] = ind
	}
	if ev.Type != run.TypeText && p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
	switch ev.Type {
	case run.TypeStartRun:
		if ev.Skill != "" && ind != "" {
			fmt.Fprintf(p.w, "%s↳ delegated run of %s\n", ind, ev.Skill)
		} else {
			fmt.Fprintf(p.w, "%s● job %s, model %s\n", ind, ev.JobID, ev.Model)
		}
	case run.TypeResumeRun:
		fmt.Fprintf(p.w, "%s● resuming job %s from checkpoint %s (step %d)\n", ind, ev.JobID, ev.Checkpoint, ev.Step)
	case run.TypeText:
		if !p.inText || p.textStep != ev.Step {
			fmt.Fprintf(p.w, "%s[%d] ", ind, ev.Step)
			p.inText, p.textStep = true, ev.Step
		}
		fmt.Fprint(p.w, strings.ReplaceAll(ev.Text, "\n", "\n"+ind+"    "))
	case run.TypeCallTool:
		tag := ""
		if ev.Replayed {
			tag = " (replayed)"
		}
		fmt.Fprintf(p.w, "%s[%d] → %s %s%s\n", ind, ev.Step, ev.Tool, clip(string(ev.Args), 120), tag)
	case run.TypeToolResult:
		mark := "←"
		if ev.IsError {
			mark = "✗"
		}
		fmt.Fprintf(p.w, "%s[%d] %s %s %s\n", ind, ev.Step, mark, ev.Tool, clip(ev.Result, 160))
	case run.TypeCompleteRun:
		fmt.Fprintf(p.w, "%s[%d] ✓ completed\n", ind, ev.Step)
	case run.TypeMaxSteps:
		fmt.Fprintf(p.w, "%s[%d] ■ stopped: --max-steps reached\n", ind, ev.Step)
	case run.TypeInterrupt:
		fmt.Fprintf(p.w, "%s[%d] ■ interrupted; 'agent run --continue' resumes\n", ind, ev.Step)
	case run.TypeError:
		fmt.Fprintf(p.w, "%s[%d] ■ %s\n", ind, ev.Step, ev.Error)
	}
}

func init() {
	resumable := "the job is saved: 'agent run --continue' resumes it"
	hints = append(hints,
		hint{is(run.ErrNoModel), "pass --model anthropic/MODEL or openai/MODEL, or set model: in $AGENT_HOME/config.yaml"},
		hint{isUnless(run.ErrMissingKey, "no job was started"), "export the key, then 'agent run --continue' resumes the job"},
		hint{is(run.ErrUnknownModel), "pass --model with a model the provider serves, with 'agent run --continue --model PROVIDER/MODEL'"},
		hint{is(run.ErrRateLimited), resumable + " once the provider accepts requests again"},
		hint{is(run.ErrProviderDown), resumable + " once the provider is back"},
		hint{is(run.ErrContextWindow), "the conversation no longer fits the model: resume from an earlier checkpoint with --resume-from ID and a narrower query, or start a new run with a smaller task"},
		hint{is(run.ErrMaxSteps), "'agent run --continue --max-steps N' with a larger N goes on"},
		hint{is(run.ErrInterrupted), "'agent run --continue' resumes from the last checkpoint and re-runs the interrupted step"},
		hint{is(run.ErrNoJob), "start one with 'agent run \"query\"'"},
		hint{is(run.ErrProvider), resumable},
	)
}
