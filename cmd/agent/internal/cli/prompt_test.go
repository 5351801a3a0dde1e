package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/disclosure"
)

func TestPromptGolden(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	tests := []struct {
		name   string
		skills string
		args   []string
	}{
		{"prompt_all_human", "all", []string{"prompt"}},
		{"prompt_all_json", "all", []string{"prompt", "--json"}},
		{"prompt_budget_json", "all", []string{"prompt", "--budget", "600", "--json"}},
		{"prompt_window_human", "all", []string{"prompt", "--context-window", "8000"}},
		{"prompt_none_json", "", []string{"prompt", "--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"AGENT_HOME": home}
			if tt.skills != "" {
				env["AGENT_SKILLS"] = tt.skills
			}
			out, errOut, code := runInProcess(t, env, tt.args...)
			checkGolden(t, tt.name, goldenTranscript(home, out, errOut, code))
		})
	}
}

func TestPromptContents(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	out, _, code := runInProcess(t, map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}, "prompt", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r promptJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if want := []string{"good", "skill-authoring"}; !slices.Equal(r.Skills, want) {
		t.Errorf("skills = %v, want %v (deploy has disable-model-invocation)", r.Skills, want)
	}
	for _, want := range []string{"- use_skill: ", "- script_run: ", "- good: Summarises CSV files. Use when the user shares a table.\n"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, r.Text)
		}
	}
	for _, unwanted := range []string{"deploy", "Deploys", "Summarise $ARGUMENTS", "good_tool", "untrusted", "future"} {
		if strings.Contains(r.Text, unwanted) {
			t.Errorf("text contains %q:\n%s", unwanted, r.Text)
		}
	}
	if got := disclosure.DefaultTokenizer().Count(r.Text); r.Tokens != got || r.Tokens == 0 {
		t.Errorf("tokens = %d, want %d", r.Tokens, got)
	}
}

func TestPromptUsageErrors(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, nil)
	for name, args := range map[string][]string{
		"both":            {"prompt", "--budget", "10", "--context-window", "1000"},
		"zero budget":     {"prompt", "--budget", "0"},
		"negative window": {"prompt", "--context-window", "-5"},
		"extra argument":  {"prompt", "x"},
	} {
		_, errOut, code := runInProcess(t, map[string]string{"AGENT_HOME": home}, args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2; stderr %s", name, code, errOut)
		}
	}
}

func TestSomeNames(t *testing.T) {
	t.Parallel()
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("s%02d", i)
	}
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{name: "few", names: []string{"a", "b"}, want: "a, b"},
		{name: "exactly the limit", names: many[:10], want: "s00, s01, s02, s03, s04, s05, s06, s07, s08, s09"},
		{name: "more", names: many, want: "s00, s01, s02, s03, s04, s05, s06, s07, s08, s09 and 15 more (--json lists them all)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := someNames(tt.names, maxNamesShown); got != tt.want {
				t.Errorf("someNames = %q, want %q", got, tt.want)
			}
		})
	}
}
