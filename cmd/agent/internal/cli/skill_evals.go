package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/app/skilltest"
	"github.com/agentskills/agent/internal/app/workspace"
)

// evalsRun runs the skill's evals (and trigger prompts) through agent
// run's model clients: each eval with the skill in Layer 1 and without
// it, each trigger prompt with it. It writes the evaluation guide's
// files under opts.Out and fails when a prompt that should load the
// skill did not, or one that should not did.
func evalsRun(ctx context.Context, opts *skillTestOptions, t *throwaway, sk *linked) error {
	cfg, err := opts.Factory.Config()
	if err != nil {
		return err
	}
	model := opts.Model
	if model == "" {
		model = cfg.Model
	}
	if model == "" {
		return usageErr(errors.New("--evals needs a model: --model PROVIDER/MODEL, or model: in config.yaml"))
	}
	_, evals, err := skilltest.LoadEvals(sk.dir, opts.Triggers)
	if err != nil {
		return err
	}
	out := opts.Out
	if out == "" {
		out = sk.entry.Canonical + "-workspace"
	}
	co := run.ClientOptions{LookupEnv: opts.Factory.LookupEnv, MaxRetries: run.DefaultMaxRetries}
	judgeSpec := opts.Judge
	if judgeSpec == "" {
		judgeSpec = model
	}
	judge, err := run.NewModel(judgeSpec, co)
	if err != nil {
		return fmt.Errorf("--judge %s: %w", judgeSpec, err)
	}
	var bench skilltest.Benchmark
	bench.Metadata.SkillName, bench.Metadata.Model = sk.entry.Canonical, model
	bench.Metadata.Timestamp = time.Now().UTC().Format(time.RFC3339)
	for _, ev := range evals {
		configs := []string{skilltest.WithSkill, skilltest.WithoutSkill}
		if !ev.ShouldTrigger {
			configs = configs[:1]
		}
		for _, config := range configs {
			r, err := runEval(ctx, t, sk, ev, config, model, co, judge, opts.MaxSteps, filepath.Join(out, "eval-"+ev.Key(), config))
			if err != nil {
				return err
			}
			bench.Runs = append(bench.Runs, r)
		}
	}
	bench.Summarize()
	if err := writeJSONFile(filepath.Join(out, "benchmark.json"), bench); err != nil {
		return err
	}
	failed := 0
	for _, r := range bench.Runs {
		if r.Failed() {
			failed++
		}
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, bench); err != nil {
			return err
		}
	} else {
		writeBenchmark(opts.IO.Out, bench, out)
	}
	if failed > 0 {
		return errSilent
	}
	return nil
}

func writeBenchmark(w io.Writer, b skilltest.Benchmark, out string) {
	for _, r := range b.Runs {
		// A baseline neither passes nor fails: it is what the skill's
		// runs compare with. An ungraded run is not ok, and not failed.
		status := "ok  "
		switch {
		case r.Failed():
			status = "FAIL"
		case r.Ungraded != "":
			status = "?   "
		case r.Configuration == skilltest.WithoutSkill:
			status = "    "
		}
		want := "should load the skill"
		if !r.ShouldTrigger {
			want = "should not load the skill"
		}
		if r.Configuration == skilltest.WithoutSkill {
			want = "baseline"
		}
		fmt.Fprintf(w, "%s eval %s %s (%s): use_skill=%v, pass rate %.2f, %d tokens, %.1fs\n", status, workspace.EscapeTerminal(r.EvalID), r.Configuration, want, r.UsedSkill, r.PassRate, r.Tokens, r.TimeSeconds)
		for _, e := range r.Graded {
			verdict := "pass"
			if !e.Passed {
				verdict = "FAIL"
			}
			fmt.Fprintf(w, "       %s: %s (%s)\n", verdict, workspace.EscapeTerminal(workspace.FirstLine(e.Text, 100)), workspace.EscapeTerminal(workspace.FirstLine(e.Evidence, 100)))
		}
		if r.Ungraded != "" {
			fmt.Fprintf(w, "       ungraded: %s\n", workspace.EscapeTerminal(r.Ungraded))
		}
		if r.Error != "" {
			fmt.Fprintf(w, "       %s\n", workspace.EscapeTerminal(r.Error))
		}
	}
	with, without := b.RunSummary[skilltest.WithSkill], b.RunSummary[skilltest.WithoutSkill]
	fmt.Fprintf(w, "%s: mean pass rate %.2f with the skill, %.2f without (%d and %d runs, %d and %d ungraded)\n",
		b.Metadata.SkillName, with.MeanPassRate, without.MeanPassRate, with.Runs, without.Runs, with.Ungraded, without.Ungraded)
	t := b.Triggers
	fmt.Fprintf(w, "%s: precision %.2f, recall %.2f (%d true positives, %d false positives, %d false negatives, %d true negatives); files in %s\n",
		b.Metadata.SkillName, t.Precision, t.Recall, t.TruePositives, t.FalsePositives, t.FalseNegatives, t.TrueNegatives, out)
}

// runEval runs one prompt in one configuration and writes its
// outputs/output.txt, grading.json and timing.json under dir.
func runEval(ctx context.Context, t *throwaway, sk *linked, ev skilltest.Eval, config, model string, co run.ClientOptions, judge run.Model, maxSteps int, dir string) (skilltest.BenchmarkRun, error) {
	r := skilltest.BenchmarkRun{EvalID: ev.Key(), Configuration: config, ShouldTrigger: ev.ShouldTrigger}
	skills := ""
	if config == skilltest.WithSkill {
		skills = sk.entry.Canonical
	}
	if err := skilltest.EmptyDir(t.workspace); err != nil {
		return r, err
	}
	for _, f := range ev.Files {
		if err := copyInto(filepath.Join(sk.dir, filepath.FromSlash(f)), filepath.Join(t.workspace, filepath.Base(f))); err != nil {
			return r, fmt.Errorf("eval %s: %w", ev.Key(), err)
		}
	}
	ws, err := t.factory(skills).loadWorkspace(ctx)
	if err != nil {
		return r, err
	}
	defer ws.Close()
	var usage run.Usage
	usedAt := 0
	start := time.Now()
	// Approve is nil: the run approves its own writes, inside the
	// throwaway workspace the sandbox confines base's tools to.
	o, runErr := run.Start(ctx, run.Options{
		Workspace: ws, Store: run.NewStore(filepath.Join(t.root, "runs", ev.Key(), config)),
		NewModel: func(spec string) (run.Model, error) { return run.NewModel(spec, co) },
		Model:    model, MaxSteps: maxSteps,
		OnEvent: func(e run.Event) {
			switch e.Type {
			case run.TypeModelReply:
				if e.Usage != nil {
					usage.InputTokens += e.Usage.InputTokens
					usage.OutputTokens += e.Usage.OutputTokens
				}
			case run.TypeCallTool:
				if usedAt == 0 && e.Tool == workspace.UseSkillTool && loadsSkill(e.Args, sk.entry.Canonical) {
					usedAt = max(e.Step, 1)
				}
			}
		},
	}, ev.Prompt)
	elapsed := time.Since(start)
	r.UsedSkill = usedAt > 0
	r.TimeSeconds, r.Tokens = elapsed.Seconds(), usage.InputTokens+usage.OutputTokens
	if o != nil {
		r.Output = o.Result
	}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	var exps []skilltest.Expectation
	if config == skilltest.WithSkill {
		text := "the model loads " + sk.entry.Canonical + " with use_skill"
		if !ev.ShouldTrigger {
			text = "the model does not load " + sk.entry.Canonical
		}
		evidence := "no use_skill call for it"
		if r.UsedSkill {
			evidence = fmt.Sprintf("use_skill %s at step %d", sk.entry.Canonical, usedAt)
		}
		exps = append(exps, skilltest.Expectation{Text: text, Passed: r.UsedSkill == ev.ShouldTrigger, Evidence: evidence})
	}
	if r.Error != "" {
		exps = append(exps, skilltest.Expectation{Text: "the run completes", Passed: false, Evidence: r.Error})
	}
	var notGraded []string
	if texts := ev.Graded(); len(texts) > 0 {
		graded, err := judgeOutput(ctx, judge, ev.Prompt, r.Output, texts)
		if err != nil {
			r.Ungraded = err.Error()
			notGraded = texts
		} else {
			r.Graded = graded
			exps = append(exps, graded...)
		}
	}
	g := skilltest.NewGrading(exps, notGraded)
	g.Ungraded = r.Ungraded
	// What the grader left ungraded counts as not passed: a grader that
	// answers garbage must not read as a pass in benchmark.json.
	// Nothing to judge (a baseline run of an eval without expected_output
	// or expectations) is nothing failed.
	r.PassRate = 1
	if n := g.Summary.Total + len(notGraded); n > 0 {
		r.PassRate = float64(g.Summary.Passed) / float64(n)
	}
	if err := os.MkdirAll(filepath.Join(dir, "outputs"), 0o755); err != nil {
		return r, fmt.Errorf("write eval results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outputs", "output.txt"), []byte(r.Output), 0o644); err != nil {
		return r, fmt.Errorf("write eval results: %w", err)
	}
	if err := writeJSONFile(filepath.Join(dir, "grading.json"), g); err != nil {
		return r, err
	}
	timing := skilltest.Timing{TotalTokens: r.Tokens, InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
		DurationMS: elapsed.Milliseconds(), TotalDurationSeconds: elapsed.Seconds()}
	return r, writeJSONFile(filepath.Join(dir, "timing.json"), timing)
}

// judgeOutput asks the grader model whether output meets texts.
func judgeOutput(ctx context.Context, judge run.Model, prompt, output string, texts []string) ([]skilltest.Expectation, error) {
	system, msg := skilltest.JudgeRequest(prompt, output, texts)
	reply, err := judge.Turn(ctx, run.Request{System: system, Messages: []run.Message{{Role: run.RoleUser, Text: msg}}}, nil)
	if err != nil {
		return nil, fmt.Errorf("the grader %s: %w", judge.Name(), err)
	}
	return skilltest.ParseJudgement(reply.Text, texts)
}

// loadsSkill reports whether use_skill's arguments name skill.
func loadsSkill(args json.RawMessage, skill string) bool {
	var in struct {
		Skill string `json:"skill"`
		Name  string `json:"name"`
	}
	if json.Unmarshal(args, &in) != nil {
		return false
	}
	return in.Skill == skill || in.Name == skill
}

func writeJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func copyInto(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}
