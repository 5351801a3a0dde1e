package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/fakemodel"
)

// greeterModel is a scripted model that loads the greeter skill when it
// is in Layer 1 (the system prompt) and the prompt asks to say hello, and
// then completes with a greeting; otherwise it completes at once.
func greeterModel(req fakemodel.Request) fakemodel.Reply {
	if strings.HasPrefix(req.System, "You grade") {
		return greeterJudge(req.Messages[0].Text)
	}
	var last *fakemodel.Msg
	for i := range req.Messages {
		if req.Messages[i].Role == "assistant" && len(req.Messages[i].ToolCalls) > 0 {
			last = &req.Messages[i]
		}
	}
	switch {
	case last == nil:
		prompt := req.Messages[0].Text
		if strings.Contains(req.System, "greeter") && strings.Contains(prompt, "hello") {
			return fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "use_skill", Args: `{"skill":"greeter"}`}}}
		}
		return fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: "{}"}}}
	case last.ToolCalls[0].Name == "use_skill":
		return fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: "{}"}}}
	}
	return fakemodel.Reply{Text: "Hello, Ada!"}
}

// greeterJudge is the scripted grader: an expectation passes when it
// names Ada and the output greets Ada; about Grace it answers prose.
func greeterJudge(msg string) fakemodel.Reply {
	if strings.Contains(msg, "Grace") {
		return fakemodel.Reply{Text: "Looks fine to me."}
	}
	output := msg[strings.Index(msg, "<output>"):strings.Index(msg, "</output>")]
	var exps []map[string]any
	for _, line := range strings.Split(msg[strings.Index(msg, "Expectations:"):], "\n")[1:] {
		if line == "" {
			continue
		}
		pass := strings.Contains(line, "Ada") && strings.Contains(output, "Ada")
		exps = append(exps, map[string]any{"text": line, "passed": pass, "evidence": "output: " + strings.TrimSpace(strings.TrimPrefix(output, "<output>"))})
	}
	b, _ := json.Marshal(map[string]any{"expectations": exps})
	return fakemodel.Reply{Text: "```json\n" + string(b) + "\n```"}
}

// TestSkillTestEvals runs `agent skill test --evals --triggers` against
// the scripted model: the eval the model loads the skill for passes, the
// one it does not is a false negative (exit 1, named), the trigger prompt
// is a true negative, and the evaluation guide's files are written.
func TestSkillTestEvals(t *testing.T) {
	agent := buildAgent(t)
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	srv.Func = greeterModel
	root := t.TempDir()
	skill := filepath.Join(root, "greeter")
	for name, body := range map[string]string{
		"SKILL.md":              "---\nname: greeter\ndescription: Greets people. Use it when the user asks to say hello.\n---\nSay hello by name.\n",
		"evals/evals.json":      `{"skill_name":"greeter","evals":[{"id":1,"prompt":"say hello to Ada","expected_output":"A greeting for Ada","files":["evals/files/names.txt"]},{"id":2,"prompt":"greet Grace","expected_output":"A greeting for Grace"},{"id":3,"prompt":"say hello to Alan","expectations":["The greeting names Alan"]}]}`,
		"evals/triggers.json":   `{"skill_name":"greeter","triggers":[{"id":"sum","prompt":"what is 2+2","should_trigger":false}]}`,
		"evals/files/names.txt": "Ada\n",
	} {
		p := filepath.Join(skill, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "results")
	cmd := exec.Command(agent, "skill", "test", skill, "--evals", "--triggers", "--model", "anthropic/fake", "--out", out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "AGENT_HOME="+filepath.Join(root, "home"), "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.AnthropicURL())
	stdout, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (%v), want 1 for the missed eval\n%s", code, err, stdout)
	}
	for _, want := range []string{"ok   eval 1 with_skill", "pass: The output matches what was expected: A greeting for Ada", "FAIL eval 2 with_skill", "ungraded: the grader's answer is not usable: it holds no JSON object",
		"FAIL eval 3 with_skill (should load the skill): use_skill=true, pass rate 0.50", "FAIL: The greeting names Alan (output: Hello, Ada!)",
		"ok   eval sum with_skill (should not load the skill): use_skill=false", "precision 1.00, recall 0.67",
		// The grader's garbage is no pass: eval 2's baseline is ungraded, at 0.
		"?    eval 2 without_skill (baseline): use_skill=false, pass rate 0.00", "     eval 3 without_skill (baseline): use_skill=false, pass rate 0.00",
		"greeter: mean pass rate 0.62 with the skill, 0.33 without (4 and 3 runs, 1 and 1 ungraded)"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	var bench struct {
		Runs []struct {
			EvalID        string  `json:"eval_id"`
			Configuration string  `json:"configuration"`
			UsedSkill     bool    `json:"used_skill"`
			Tokens        int64   `json:"tokens"`
			Output        string  `json:"output"`
			PassRate      float64 `json:"pass_rate"`
			Ungraded      string  `json:"ungraded"`
		} `json:"runs"`
		RunSummary map[string]struct {
			Runs         int     `json:"runs"`
			Ungraded     int     `json:"ungraded"`
			MeanPassRate float64 `json:"mean_pass_rate"`
		} `json:"run_summary"`
		Triggers struct {
			TruePositives  int     `json:"true_positives"`
			FalseNegatives int     `json:"false_negatives"`
			TrueNegatives  int     `json:"true_negatives"`
			FalsePositives int     `json:"false_positives"`
			Precision      float64 `json:"precision"`
			Recall         float64 `json:"recall"`
		} `json:"triggers"`
	}
	readJSONFile(t, filepath.Join(out, "benchmark.json"), &bench)
	if len(bench.Runs) != 7 {
		t.Fatalf("%d runs, want 7 (three evals in two configurations, one trigger prompt)", len(bench.Runs))
	}
	for _, r := range bench.Runs {
		wantUsed := (r.EvalID == "1" || r.EvalID == "3") && r.Configuration == "with_skill"
		if r.UsedSkill != wantUsed || r.Tokens == 0 {
			t.Errorf("run %+v: used_skill want %v, and tokens counted", r, wantUsed)
		}
		if r.EvalID == "2" && (r.Ungraded == "" || r.PassRate != 0) {
			t.Errorf("run %+v: want ungraded, pass rate 0", r)
		}
	}
	if s := bench.RunSummary["without_skill"]; s.Runs != 3 || s.Ungraded != 1 || s.MeanPassRate != 1.0/3 {
		t.Errorf("run_summary without_skill = %+v, want 3 runs, 1 ungraded, mean pass rate 1/3", s)
	}
	if tr := bench.Triggers; tr.TruePositives != 2 || tr.FalseNegatives != 1 || tr.TrueNegatives != 1 || tr.FalsePositives != 0 || tr.Precision != 1 || tr.Recall != 2.0/3 {
		t.Errorf("triggers = %+v", tr)
	}
	var grading struct {
		Expectations []struct {
			Text     string `json:"text"`
			Passed   bool   `json:"passed"`
			Evidence string `json:"evidence"`
		} `json:"expectations"`
		Summary struct {
			PassRate float64 `json:"pass_rate"`
		} `json:"summary"`
		NotGraded []string `json:"not_graded"`
		Ungraded  string   `json:"ungraded"`
	}
	// The grader's verdict is in grading.json: eval 1 passes both, eval 3
	// fails the one it grades, eval 2 stays ungraded and says why.
	readJSONFile(t, filepath.Join(out, "eval-1", "with_skill", "grading.json"), &grading)
	if len(grading.Expectations) != 2 || !grading.Expectations[1].Passed || !strings.Contains(grading.Expectations[1].Text, "A greeting for Ada") || grading.Summary.PassRate != 1 || len(grading.NotGraded) != 0 {
		t.Errorf("grading.json of eval 1 = %+v", grading)
	}
	grading.Expectations, grading.NotGraded = nil, nil
	readJSONFile(t, filepath.Join(out, "eval-3", "with_skill", "grading.json"), &grading)
	if len(grading.Expectations) != 2 || grading.Expectations[1].Passed || grading.Expectations[1].Text != "The greeting names Alan" || grading.Summary.PassRate != 0.5 {
		t.Errorf("grading.json of eval 3 = %+v", grading)
	}
	grading.Expectations, grading.NotGraded = nil, nil
	readJSONFile(t, filepath.Join(out, "eval-2", "with_skill", "grading.json"), &grading)
	if len(grading.NotGraded) != 1 || !strings.Contains(grading.Ungraded, "no JSON object") {
		t.Errorf("grading.json of eval 2 = %+v", grading)
	}
	var timing struct {
		TotalTokens int64 `json:"total_tokens"`
		DurationMS  int64 `json:"duration_ms"`
	}
	readJSONFile(t, filepath.Join(out, "eval-2", "without_skill", "timing.json"), &timing)
	if timing.TotalTokens == 0 {
		t.Errorf("timing.json = %+v", timing)
	}
	if b, err := os.ReadFile(filepath.Join(out, "eval-1", "with_skill", "outputs", "output.txt")); err != nil || string(b) != "Hello, Ada!" {
		t.Errorf("output.txt = %q, %v", b, err)
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
