package skilltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrJudgement is a grader's answer that is not the JSON it was asked
// for; the expectations it was to grade stay ungraded.
var ErrJudgement = errors.New("the grader's answer is not usable")

// judgeSystem asks a model to grade like the evaluation guide's grader:
// each expectation passed or not, with evidence quoted from the output.
const judgeSystem = `You grade the output of an AI agent against expectations.
For each expectation, decide whether the output meets it, and quote or
describe the evidence in the output. Judge only the output given. Answer
with JSON only, no prose, in this shape:
{"expectations": [{"text": "<the expectation, as given>", "passed": true, "evidence": "<why>"}]}
with one entry per expectation, in the order given.`

// Graded are what a grader judges for ev: its expected_output and
// its own expectations; none for a prompt that gives neither.
func (ev Eval) Graded() []string {
	var out []string
	if strings.TrimSpace(ev.ExpectedOutput) != "" {
		out = append(out, "The output matches what was expected: "+ev.ExpectedOutput)
	}
	for _, e := range ev.Expectations {
		if strings.TrimSpace(e) != "" {
			out = append(out, e)
		}
	}
	return out
}

// JudgeRequest is the system prompt and the message that ask a grader to
// judge output against texts.
func JudgeRequest(prompt, output string, texts []string) (system, message string) {
	var b strings.Builder
	fmt.Fprintf(&b, "The task given to the agent:\n<task>\n%s\n</task>\n\n", prompt)
	fmt.Fprintf(&b, "The agent's final output:\n<output>\n%s\n</output>\n\nExpectations:\n", output)
	for i, t := range texts {
		fmt.Fprintf(&b, "%d. %s\n", i+1, t)
	}
	return judgeSystem, b.String()
}

// ParseJudgement reads a grader's answer about texts: the first JSON
// object in it (models wrap JSON in prose or fences), with one entry per
// expectation. The texts are the ones asked about, whatever the grader
// wrote back.
func ParseJudgement(answer string, texts []string) ([]Expectation, error) {
	start := strings.IndexByte(answer, '{')
	if start < 0 {
		return nil, fmt.Errorf("%w: it holds no JSON object", ErrJudgement)
	}
	var j struct {
		Expectations []struct {
			Passed   *bool  `json:"passed"`
			Evidence string `json:"evidence"`
		} `json:"expectations"`
	}
	if err := json.NewDecoder(strings.NewReader(answer[start:])).Decode(&j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJudgement, err)
	}
	if len(j.Expectations) != len(texts) {
		return nil, fmt.Errorf("%w: it judged %d expectations, not %d", ErrJudgement, len(j.Expectations), len(texts))
	}
	out := make([]Expectation, len(texts))
	for i, e := range j.Expectations {
		if e.Passed == nil {
			return nil, fmt.Errorf("%w: expectation %d has no \"passed\"", ErrJudgement, i+1)
		}
		out[i] = Expectation{Text: texts[i], Passed: *e.Passed, Evidence: e.Evidence}
	}
	return out, nil
}
