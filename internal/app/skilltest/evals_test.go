package skilltest

import "testing"

func TestBenchmarkRunFailed(t *testing.T) {
	miss := []Expectation{{Text: "greets Ada", Passed: false}}
	hit := []Expectation{{Text: "greets Ada", Passed: true}}
	tests := []struct {
		name string
		run  BenchmarkRun
		want bool
	}{
		{name: "loaded and graded pass", run: BenchmarkRun{Configuration: WithSkill, ShouldTrigger: true, UsedSkill: true, Graded: hit, PassRate: 1}},
		{name: "graded fail", run: BenchmarkRun{Configuration: WithSkill, ShouldTrigger: true, UsedSkill: true, Graded: miss, PassRate: 0.5}, want: true},
		{name: "not loaded", run: BenchmarkRun{Configuration: WithSkill, ShouldTrigger: true}, want: true},
		{name: "loaded when it should not", run: BenchmarkRun{Configuration: WithSkill, UsedSkill: true}, want: true},
		{name: "run error", run: BenchmarkRun{Configuration: WithSkill, ShouldTrigger: true, UsedSkill: true, Error: "boom"}, want: true},
		// Ungraded is not passed (its pass rate) but fails nothing.
		{name: "ungraded", run: BenchmarkRun{Configuration: WithSkill, ShouldTrigger: true, UsedSkill: true, Ungraded: "no JSON", PassRate: 0.5}},
		{name: "baseline graded fail", run: BenchmarkRun{Configuration: WithoutSkill, ShouldTrigger: true, Graded: miss}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run.Failed(); got != tt.want {
				t.Errorf("Failed() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSummarizeUngraded(t *testing.T) {
	b := Benchmark{Runs: []BenchmarkRun{
		{EvalID: "1", Configuration: WithoutSkill, PassRate: 1},
		{EvalID: "2", Configuration: WithoutSkill, PassRate: 0, Ungraded: "no JSON"},
		{EvalID: "1", Configuration: WithSkill, ShouldTrigger: true, UsedSkill: true, PassRate: 1},
	}}
	b.Summarize()
	if s := b.RunSummary[WithoutSkill]; s.Runs != 2 || s.Ungraded != 1 || s.MeanPassRate != 0.5 {
		t.Errorf("without_skill = %+v, want 2 runs, 1 ungraded, mean pass rate 0.5", s)
	}
	if s := b.RunSummary[WithSkill]; s.Runs != 1 || s.Ungraded != 0 || s.MeanPassRate != 1 {
		t.Errorf("with_skill = %+v", s)
	}
}
