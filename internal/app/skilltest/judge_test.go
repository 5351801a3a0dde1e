package skilltest

import (
	"errors"
	"strings"
	"testing"
)

func TestParseJudgement(t *testing.T) {
	texts := []string{"greets Ada", "is short"}
	tests := []struct {
		name   string
		answer string
		passed []bool
		err    string
	}{
		{name: "plain", answer: `{"expectations":[{"text":"greets Ada","passed":true,"evidence":"Hello, Ada!"},{"text":"is short","passed":false,"evidence":"two pages"}]}`, passed: []bool{true, false}},
		{name: "in a fence with prose", answer: "Here is my grading:\n```json\n{\"expectations\":[{\"passed\":true},{\"passed\":true}]}\n```\nDone.", passed: []bool{true, true}},
		{name: "no JSON", answer: "Both pass.", err: "no JSON object"},
		{name: "too few", answer: `{"expectations":[{"passed":true}]}`, err: "judged 1 expectations, not 2"},
		{name: "no verdict", answer: `{"expectations":[{"passed":true},{"evidence":"?"}]}`, err: `expectation 2 has no "passed"`},
		{name: "broken", answer: `{"expectations":[{"passed":tru`, err: "not usable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJudgement(tt.answer, texts)
			if tt.err != "" {
				if !errors.Is(err, ErrJudgement) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseJudgement = %v, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range tt.passed {
				if got[i].Passed != p || got[i].Text != texts[i] {
					t.Errorf("expectation %d = %+v, want passed %v for %q", i, got[i], p, texts[i])
				}
			}
		})
	}
}

// FuzzParseJudgement: any answer gives an error or one graded
// expectation per text, each with the text asked about.
func FuzzParseJudgement(f *testing.F) {
	f.Add(`{"expectations":[{"passed":true,"evidence":"x"}]}`)
	f.Add("```json\n{\"expectations\":[{\"passed\":false}]}\n```")
	f.Add(`{"expectations":[{"passed":null}]} {"x":1}`)
	f.Add(`prose { "expectations": [ ] }`)
	f.Fuzz(func(t *testing.T, answer string) {
		texts := []string{"the one expectation"}
		got, err := ParseJudgement(answer, texts)
		if err != nil {
			if !errors.Is(err, ErrJudgement) {
				t.Fatalf("error %v is not ErrJudgement", err)
			}
			return
		}
		if len(got) != 1 || got[0].Text != texts[0] {
			t.Fatalf("ParseJudgement(%q) = %+v", answer, got)
		}
	})
}
