package skilltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrEvals: evals/evals.json or evals/triggers.json cannot be read.
var ErrEvals = errors.New("invalid evals")

// Eval is one entry of evals/evals.json, the Agent Skills evaluation
// format: a prompt the skill should help with.
type Eval struct {
	ID             json.RawMessage `json:"id"` // a number or a string
	Prompt         string          `json:"prompt"`
	ExpectedOutput string          `json:"expected_output"`
	// Files are paths inside the skill folder, copied into the scratch
	// workspace before the prompt runs.
	Files []string `json:"files,omitempty"`
	// Expectations (or assertions) are judged, with expected_output, by
	// a grader model (Graded, JudgeRequest).
	Expectations []string `json:"expectations,omitempty"`
	// ShouldTrigger is false for a prompt of evals/triggers.json that
	// must not load the skill; true for every eval of evals.json.
	ShouldTrigger bool `json:"should_trigger"`
}

// Key is the eval's id as text, for folder names.
func (e Eval) Key() string {
	var s string
	if json.Unmarshal(e.ID, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(e.ID))
}

// Evals is evals/evals.json.
type Evals struct {
	SkillName string `json:"skill_name"`
	Evals     []Eval `json:"evals"`
}

// Triggers is evals/triggers.json: prompts with whether they should load
// the skill.
type Triggers struct {
	SkillName string `json:"skill_name"`
	Triggers  []Eval `json:"triggers"`
}

// LoadEvals reads dir/evals/evals.json, and with triggers
// dir/evals/triggers.json, as one list: the evals first, each to trigger.
func LoadEvals(dir string, triggers bool) (string, []Eval, error) {
	var ev Evals
	if err := readJSON(filepath.Join(dir, "evals", "evals.json"), &ev); err != nil {
		return "", nil, err
	}
	all := make([]Eval, 0, len(ev.Evals))
	for _, e := range ev.Evals {
		e.ShouldTrigger = true
		all = append(all, e)
	}
	if triggers {
		var tr Triggers
		// should_trigger defaults to false there: the file is for prompts
		// that must not load the skill.
		if err := readJSON(filepath.Join(dir, "evals", "triggers.json"), &tr); err != nil {
			return "", nil, err
		}
		all = append(all, tr.Triggers...)
	}
	seen := map[string]bool{}
	for _, e := range all {
		k := e.Key()
		if k == "" || !filepath.IsLocal(k) || strings.ContainsAny(k, `/\`) {
			return "", nil, fmt.Errorf("%w: eval id %s is not a plain name or number", ErrEvals, e.ID)
		}
		if seen[k] {
			return "", nil, fmt.Errorf("%w: eval id %s appears twice", ErrEvals, k)
		}
		seen[k] = true
		if strings.TrimSpace(e.Prompt) == "" {
			return "", nil, fmt.Errorf("%w: eval %s has no prompt", ErrEvals, k)
		}
		for _, f := range e.Files {
			if !filepath.IsLocal(filepath.FromSlash(f)) {
				return "", nil, fmt.Errorf("%w: eval %s: file %q is not inside the skill", ErrEvals, k, f)
			}
		}
	}
	return ev.SkillName, all, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrEvals, err)
	}
	return nil
}

// The files the evaluation guide names, with its field names.

// Expectation is one graded statement of grading.json.
type Expectation struct {
	Text     string `json:"text"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
}

// Grading is grading.json of one run.
type Grading struct {
	Expectations []Expectation  `json:"expectations"`
	Summary      GradingSummary `json:"summary"`
	// NotGraded are the eval's expected_output and expectations when the
	// grader model gave no usable answer; Ungraded says why.
	NotGraded []string `json:"not_graded,omitempty"`
	Ungraded  string   `json:"ungraded,omitempty"`
}

// GradingSummary counts a Grading's expectations.
type GradingSummary struct {
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Total    int     `json:"total"`
	PassRate float64 `json:"pass_rate"`
}

// NewGrading sums up exps.
func NewGrading(exps []Expectation, notGraded []string) Grading {
	g := Grading{Expectations: exps, NotGraded: notGraded}
	for _, e := range exps {
		if e.Passed {
			g.Summary.Passed++
		} else {
			g.Summary.Failed++
		}
	}
	g.Summary.Total = len(exps)
	if g.Summary.Total > 0 {
		g.Summary.PassRate = float64(g.Summary.Passed) / float64(g.Summary.Total)
	}
	return g
}

// Timing is timing.json of one run.
type Timing struct {
	TotalTokens          int64   `json:"total_tokens"`
	InputTokens          int64   `json:"input_tokens"`
	OutputTokens         int64   `json:"output_tokens"`
	DurationMS           int64   `json:"duration_ms"`
	TotalDurationSeconds float64 `json:"total_duration_seconds"`
}

// Configurations of a run.
const (
	WithSkill    = "with_skill"
	WithoutSkill = "without_skill"
)

// BenchmarkRun is one run of benchmark.json.
type BenchmarkRun struct {
	EvalID        string  `json:"eval_id"`
	Configuration string  `json:"configuration"`
	ShouldTrigger bool    `json:"should_trigger"`
	UsedSkill     bool    `json:"used_skill"`
	PassRate      float64 `json:"pass_rate"`
	TimeSeconds   float64 `json:"time_seconds"`
	Tokens        int64   `json:"tokens"`
	Output        string  `json:"output"`
	Error         string  `json:"error,omitempty"`
	// Graded are the grader's verdicts on expected_output and the
	// expectations; Ungraded says why there are none when there should be.
	Graded   []Expectation `json:"graded,omitempty"`
	Ungraded string        `json:"ungraded,omitempty"`
}

// Failed is a run with the skill that did not load it when it should
// have (or did when it should not), failed, or missed an expectation.
// An ungraded run is not failed, only not passed (its PassRate).
func (r BenchmarkRun) Failed() bool {
	if r.Configuration != WithSkill {
		return false
	}
	if r.ShouldTrigger != r.UsedSkill || r.Error != "" {
		return true
	}
	for _, e := range r.Graded {
		if !e.Passed {
			return true
		}
	}
	return false
}

// Summary is the means of one configuration's runs.
type Summary struct {
	Runs            int     `json:"runs"`
	Ungraded        int     `json:"ungraded,omitempty"`
	MeanPassRate    float64 `json:"mean_pass_rate"`
	MeanTimeSeconds float64 `json:"mean_time_seconds"`
	MeanTokens      float64 `json:"mean_tokens"`
}

// TriggerScore is how well use_skill followed should_trigger.
type TriggerScore struct {
	TruePositives  int     `json:"true_positives"`
	FalsePositives int     `json:"false_positives"`
	FalseNegatives int     `json:"false_negatives"`
	TrueNegatives  int     `json:"true_negatives"`
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
}

// Benchmark is benchmark.json.
type Benchmark struct {
	Metadata struct {
		SkillName string `json:"skill_name"`
		Model     string `json:"model"`
		Timestamp string `json:"timestamp"`
	} `json:"metadata"`
	Runs       []BenchmarkRun     `json:"runs"`
	RunSummary map[string]Summary `json:"run_summary"`
	Triggers   TriggerScore       `json:"triggers"`
}

// Summarize fills RunSummary and Triggers from Runs: triggers count the
// with_skill runs only (without the skill there is nothing to load).
func (b *Benchmark) Summarize() {
	b.RunSummary = map[string]Summary{}
	var t TriggerScore
	for _, r := range b.Runs {
		s := b.RunSummary[r.Configuration]
		s.Runs++
		if r.Ungraded != "" {
			s.Ungraded++
		}
		s.MeanPassRate += r.PassRate
		s.MeanTimeSeconds += r.TimeSeconds
		s.MeanTokens += float64(r.Tokens)
		b.RunSummary[r.Configuration] = s
		if r.Configuration != WithSkill {
			continue
		}
		switch {
		case r.ShouldTrigger && r.UsedSkill:
			t.TruePositives++
		case r.ShouldTrigger:
			t.FalseNegatives++
		case r.UsedSkill:
			t.FalsePositives++
		default:
			t.TrueNegatives++
		}
	}
	for k, s := range b.RunSummary {
		n := float64(s.Runs)
		s.MeanPassRate, s.MeanTimeSeconds, s.MeanTokens = s.MeanPassRate/n, s.MeanTimeSeconds/n, s.MeanTokens/n
		b.RunSummary[k] = s
	}
	if d := t.TruePositives + t.FalsePositives; d > 0 {
		t.Precision = float64(t.TruePositives) / float64(d)
	}
	if d := t.TruePositives + t.FalseNegatives; d > 0 {
		t.Recall = float64(t.TruePositives) / float64(d)
	}
	b.Triggers = t
}
