package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentskills/agent/internal/app/audit"
	"github.com/agentskills/agent/internal/app/skilltest"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

type skillTestOptions struct {
	IO      *IOStreams
	Factory *Factory

	Target string
	JSON   bool
	JUnit  string
	Run    string
	// Evals and Triggers run evals/evals.json (and evals/triggers.json)
	// through agent run's model clients (skill_evals.go).
	Evals    bool
	Triggers bool
	Model    string
	Judge    string
	Out      string
	MaxSteps int
}

func newCmdSkillTest(f *Factory, runF func(context.Context, *skillTestOptions) error) *cobra.Command {
	opts := &skillTestOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "test [dir|name]",
		Short: "Run a skill's tests the way a model reaches it",
		Long: dedent(`
			Link the skill (a folder, default ".", or an installed skill's name)
			into a throwaway AGENT_HOME and run:

			  - its cases, tests/*.yaml: each a tool call or a script_run, made
			    through the same call path as 'agent call', 'agent mcp' and
			    'agent run', with expectations on success, the error code, JSON
			    paths of the result and the files the call wrote in a scratch
			    workspace (${WORKSPACE} in an argument is its path);
			  - validate --strict, the plugin's own go test ./... (in the
			    build's sandbox), and the audit;
			  - the sandbox: a case whose code was refused a path or a host its
			    SKILL.md does not declare fails, and the denial is shown with it.

			--run picks cases and checks by name (the checks are named
			"validate --strict", "go test" and "audit"). --json prints the
			report; --junit also writes it as JUnit XML for CI. The exit status
			is 1 when anything failed.

			--evals runs evals/evals.json instead (the Agent Skills evaluation
			format) through agent run's model clients, with and without the
			skill, and writes grading.json, timing.json and benchmark.json
			under --out; --triggers adds evals/triggers.json, prompts that must
			not load the skill, and reports precision and recall. A grader
			model (--judge, default the --model) judges each run's output
			against the eval's expected_output and expectations, with
			evidence; an eval with the skill that fails one, or that did not
			load the skill, makes the exit status 1. A grader's answer that
			is not the JSON asked for leaves them ungraded (not passed, not
			failed), and says why.

			Guide: docs/testing-skills.md.
		`),
		Example: dedent(`
			$ agent skill test ./my-skill
			$ agent skill test ./my-skill --run greet --junit report.xml
			$ agent skill test ./my-skill --evals --triggers --model anthropic/claude-sonnet-4-5
		`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr(fmt.Errorf("%s takes one [dir|name]; see '%s --help'", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = "."
			if len(args) == 1 {
				opts.Target = args[0]
			}
			if _, err := regexp.Compile(opts.Run); err != nil {
				return usageErr(fmt.Errorf("--run: %w", err))
			}
			if opts.Triggers && !opts.Evals {
				return usageErr(errors.New("--triggers goes with --evals"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return skillTestRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&opts.JUnit, "junit", "", "also write the report as JUnit XML to `FILE`")
	cmd.Flags().StringVar(&opts.Run, "run", "", "run only the cases and checks whose name matches `REGEX`")
	cmd.Flags().BoolVar(&opts.Evals, "evals", false, "run evals/evals.json with and without the skill")
	cmd.Flags().BoolVar(&opts.Triggers, "triggers", false, "with --evals: also evals/triggers.json, prompts that must not load the skill")
	cmd.Flags().StringVar(&opts.Model, "model", "", "with --evals: the `PROVIDER/MODEL` (default: model: in config.yaml)")
	cmd.Flags().StringVar(&opts.Judge, "judge", "", "with --evals: the `PROVIDER/MODEL` that grades the outputs (default: the --model)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "with --evals: the folder for grading.json, timing.json and benchmark.json (default: <skill>-workspace)")
	cmd.Flags().IntVar(&opts.MaxSteps, "max-steps", 10, "with --evals: the steps of one eval's run")
	return cmd
}

// throwaway is a test's own home: AGENT_HOME, the scratch workspace and
// the factories over them. The user's home is never written.
type throwaway struct {
	root, home, workspace string
	parent                *Factory
}

func newThrowaway(f *Factory) (*throwaway, error) {
	root, err := os.MkdirTemp("", "agent-skill-test-")
	if err != nil {
		return nil, fmt.Errorf("make a throwaway home: %w", err)
	}
	t := &throwaway{root: root, home: filepath.Join(root, "home"), workspace: filepath.Join(root, "workspace"), parent: f}
	for _, d := range []string{t.home, t.workspace} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("make a throwaway home: %w", err)
		}
	}
	return t, nil
}

func (t *throwaway) Close() error { return os.RemoveAll(t.root) }

// factory is a Factory whose AGENT_HOME, AGENT_WORKSPACE and AGENT_SKILLS
// are the throwaway's, both for the configuration and for what plugins
// and scripts are handed.
func (t *throwaway) factory(skills string) *Factory {
	set := map[string]string{"AGENT_HOME": t.home, "AGENT_WORKSPACE": t.workspace, "AGENT_SKILLS": skills}
	look := t.parent.LookupEnv
	f := &Factory{
		IO: t.parent.IO,
		LookupEnv: func(k string) (string, bool) {
			if v, ok := set[k]; ok {
				return v, true
			}
			return look(k)
		},
		Executable: t.parent.Executable,
		CallFloor:  t.parent.CallFloor,
	}
	environ := t.parent.Environ
	f.Environ = func() []string {
		var env []string
		if environ != nil {
			env = environ()
		}
		out := make([]string, 0, len(env)+len(set))
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if _, ok := set[k]; !ok {
				out = append(out, kv)
			}
		}
		for k, v := range set {
			out = append(out, k+"="+v)
		}
		return out
	}
	return f
}

// skillDir finds the folder of target: a folder holding SKILL.md, else an
// installed or discovered skill's name. untrusted names an installed
// skill that this home does not trust: its cases run in the sandbox as
// any call does, but its plugin's own tests are not run (goTestCheck).
func skillDir(ctx context.Context, f *Factory, target string) (dir, untrusted string, err error) {
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		if _, err := os.Stat(gitsrc.ManifestPath(target)); err != nil {
			return "", "", fmt.Errorf("test %s: no SKILL.md in this folder", target)
		}
		dir, err := filepath.Abs(target)
		return dir, "", err
	}
	if _, err := manifest.Canonical(target); err != nil {
		return "", "", fmt.Errorf("test %s: neither a skill folder nor a skill's name", target)
	}
	store, err := f.Store()
	if err != nil {
		return "", "", err
	}
	e, err := workspace.FindEntry(ctx, trust.Of(store), f.discovery(), target)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return "", "", fmt.Errorf("test %s: no such folder, and no installed skill of that name", target)
	case err != nil:
		return "", "", err
	case e.Path == "":
		return "", "", fmt.Errorf("test %s: it ships inside the agent binary; there is no folder to test", e.Canonical)
	}
	if !e.Trusted {
		untrusted = e.Canonical
	}
	return e.Path, untrusted, nil
}

// linked is the skill under test, linked into the throwaway home.
type linked struct {
	dir   string
	entry registry.Entry
	m     *manifest.Manifest
}

// linkForTest links dir into t's home, as `agent skill link` does, and
// installs its dependencies.
func linkForTest(ctx context.Context, t *throwaway, dir string) (*linked, error) {
	lf := t.factory("")
	store, err := lf.Store()
	if err != nil {
		return nil, err
	}
	inst, err := lf.installer()
	if err != nil {
		return nil, err
	}
	e, err := inst.Link(ctx, registry.NewPipeline(store), dir, Version, lf.IO.Warn)
	if err != nil {
		return nil, err
	}
	m, _, err := gitsrc.LoadManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := installRequires(ctx, lf, e, m); err != nil {
		return nil, err
	}
	return &linked{dir: dir, entry: e, m: m}, nil
}

// installRequires installs what the skill under test requires (metadata
// agent.requires, SPEC §21) into the throwaway home, as add would: the
// graph resolved first (a conflict or a cycle is an error that names it),
// each dependency audited, then added and trusted there, so that the
// cases reach them as a model would once AGENT_SKILLS names the skill.
func installRequires(ctx context.Context, f *Factory, e registry.Entry, m *manifest.Manifest) error {
	reqs, err := m.Requires()
	if err != nil || len(reqs) == 0 {
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	inst, err := f.installer()
	if err != nil {
		return err
	}
	pipe := registry.NewPipeline(store)
	progress := f.IO.Progress()
	root := gitsrc.Source{URL: "file://" + filepath.ToSlash(e.Path), Raw: e.Path}
	ns, err := resolveAdd(ctx, store, pipe, progress, root, []registry.Reviewed{{Canonical: e.Canonical, Manifest: m}})
	if err != nil {
		return fmt.Errorf("install what %s requires: %w", e.Canonical, err)
	}
	writeDeps(f.IO.ErrOut, ns, true)
	gate := newAuditGate(cfg, f.IO.ErrOut, nil, "test it after 'agent skill trust %s --accept-findings' in your own home")
	if err := auditDeps(ctx, pipe, progress, ns, gate); err != nil {
		return fmt.Errorf("install what %s requires: %w", e.Canonical, err)
	}
	_, err = addDeps(ctx, pipe, ns, true, inst.Prepare, registry.AddRequest{AgentVersion: Version, Progress: progress, Warn: f.IO.Warn})
	return err
}

func skillTestRun(ctx context.Context, opts *skillTestOptions) error {
	dir, untrusted, err := skillDir(ctx, opts.Factory, opts.Target)
	if err != nil {
		return err
	}
	t, err := newThrowaway(opts.Factory)
	if err != nil {
		return err
	}
	defer t.Close()
	sk, err := linkForTest(ctx, t, dir)
	if err != nil {
		return err
	}
	if opts.Evals {
		return evalsRun(ctx, opts, t, sk)
	}
	var pick *regexp.Regexp
	if opts.Run != "" {
		pick = regexp.MustCompile(opts.Run)
	}
	report := skilltest.Report{Skill: sk.entry.Canonical}
	cases, err := skilltest.Load(dir)
	if err != nil {
		report.Results = append(report.Results, skilltest.Result{Name: skilltest.Dir + "/*.yaml", Kind: skilltest.KindCheck, Failures: []string{err.Error()}})
	}
	if len(cases) > 0 {
		ws, err := t.factory(sk.entry.Canonical).loadWorkspace(ctx)
		if err != nil {
			return err
		}
		report.Results = append(report.Results, skilltest.RunCases(ctx, ws, cases, skilltest.Options{
			Skill: sk.entry.Canonical, Workspace: t.workspace, Run: pick,
		})...)
		ws.Close()
	}
	for _, c := range []struct {
		name string
		run  func() skilltest.Result
	}{
		{"validate --strict", func() skilltest.Result { return validateCheck(dir) }},
		{"go test", func() skilltest.Result { return goTestCheck(ctx, opts.Factory, t, sk, untrusted) }},
		{"audit", func() skilltest.Result { return auditCheck(opts.Factory, sk) }},
	} {
		if pick != nil && !pick.MatchString(c.name) {
			continue
		}
		start := time.Now()
		r := c.run()
		if r.Name == "" {
			continue // does not apply to this skill
		}
		r.Kind, r.Duration = skilltest.KindCheck, time.Since(start)
		report.Results = append(report.Results, r)
	}
	return writeSkillTestReport(opts, report)
}

func validateCheck(dir string) skilltest.Result {
	r := skilltest.Result{Name: "validate --strict"}
	errs, warns, _ := lintSkill(dir, true)
	var out []string
	for _, p := range errs {
		r.Failures = append(r.Failures, workspace.EscapeTerminal(p.String()))
	}
	for _, p := range warns {
		out = append(out, workspace.EscapeTerminal(p.String())+" (warning)")
	}
	r.Output = strings.Join(out, "\n")
	return r
}

// goTestCheck runs the plugin's own go test. Those tests get the host's
// network (plugbuild.Test: sdktest's socket needs it), more than the
// skill declares, so an installed skill this home does not trust is not
// tested this way: the check says so and how to run it.
func goTestCheck(ctx context.Context, f *Factory, t *throwaway, sk *linked, untrusted string) skilltest.Result {
	if sk.m.Plugin == nil || sk.m.Plugin.Build == "" {
		return skilltest.Result{}
	}
	r := skilltest.Result{Name: "go test"}
	if untrusted != "" {
		r.Skipped = fmt.Sprintf("%s is not trusted, and a plugin's own tests run with the network; trust it ('agent skill trust %s') or test a folder you reviewed", untrusted, untrusted)
		return r
	}
	out, err := plugbuild.Test(ctx, plugbuild.Options{Home: t.home, Environ: f.environ()}, sk.dir, sk.m.Plugin.Build)
	r.Output = strings.TrimSpace(out)
	if err != nil {
		r.Failures = []string{"go test ./... of the plugin failed: " + firstLine(err.Error())}
	}
	return r
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func auditCheck(f *Factory, sk *linked) skilltest.Result {
	r := skilltest.Result{Name: "audit"}
	cfg, err := f.Config()
	if err != nil {
		r.Failures = []string{err.Error()}
		return r
	}
	rules, err := auditRules(cfg)
	if err != nil {
		r.Failures = []string{err.Error()}
		return r
	}
	rep, err := rules.Audit(os.DirFS(sk.dir), sk.m)
	if err != nil {
		r.Failures = []string{err.Error()}
		return r
	}
	var out []string
	for _, fd := range rep.Findings {
		line := fmt.Sprintf("%s:%d: %s %s: %s", fd.File, fd.Line, fd.Severity, fd.Rule, fd.Message)
		out = append(out, line)
		if cfg.Audit.FailOn != audit.SeverityNone && fd.Severity >= cfg.Audit.FailOn {
			r.Failures = append(r.Failures, line)
		}
	}
	r.Output = rep.Summary()
	if len(out) > 0 {
		r.Output += "\n" + strings.Join(out, "\n")
	}
	return r
}

func writeSkillTestReport(opts *skillTestOptions, report skilltest.Report) error {
	if opts.JUnit != "" {
		var b strings.Builder
		if err := skilltest.WriteJUnit(&b, report); err != nil {
			return err
		}
		if err := os.WriteFile(opts.JUnit, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("write the JUnit report: %w", err)
		}
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, report); err != nil {
			return err
		}
	} else {
		w := opts.IO.Out
		for _, r := range report.Results {
			where := ""
			if r.File != "" {
				where = fmt.Sprintf(" (%s:%d)", r.File, r.Line)
			}
			status := "ok  "
			switch {
			case !r.Passed():
				status = "FAIL"
			case r.Skipped != "":
				status = "skip"
			}
			fmt.Fprintf(w, "%s %s %s%s %s\n", status, r.Kind, workspace.EscapeTerminal(r.Name), where, r.Duration.Round(time.Millisecond))
			for _, fl := range r.Failures {
				fmt.Fprintf(w, "       %s\n", strings.ReplaceAll(workspace.EscapeTerminal(fl), "\n", "\n       "))
			}
			for _, d := range r.Denials {
				fmt.Fprintf(w, "       sandbox denial: %s\n", workspace.EscapeTerminal(d))
			}
			if r.Skipped != "" {
				fmt.Fprintf(w, "       %s\n", workspace.EscapeTerminal(r.Skipped))
			}
		}
		skipped := ""
		if n := report.Skipped(); n > 0 {
			skipped = fmt.Sprintf(", %d skipped", n)
		}
		fmt.Fprintf(w, "%s: %d passed, %d failed%s\n", report.Skill, len(report.Results)-report.Failed()-report.Skipped(), report.Failed(), skipped)
	}
	if report.Failed() > 0 {
		return errSilent
	}
	return nil
}
