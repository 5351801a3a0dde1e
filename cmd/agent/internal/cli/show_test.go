package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
)

// triggerSkills cover the trigger matrix of user-invocable and
// disable-model-invocation.
func triggerSkills() []fixtureSkill {
	mk := func(name, extra string) fixtureSkill {
		return fixtureSkill{
			entry: fixtureEntry(name),
			files: map[string]string{"SKILL.md": "---\nname: " + name + "\ndescription: The " + name + " skill.\n" + extra + "---\nRun $ARGUMENTS for " + name + ".\n"},
		}
	}
	return []fixtureSkill{
		mk("both-ok", ""),
		mk("person-only", "disable-model-invocation: true\n"),
		mk("model-only", "user-invocable: false\n"),
		mk("nobody", "disable-model-invocation: true\nuser-invocable: false\n"),
		mk("forked", "context: fork\nagent: Explore\nmodel: haiku\nallowed-tools: [Read, Grep]\n"),
	}
}

func fixtureEntry(name string) registry.Entry {
	return registry.Entry{Name: name, Canonical: name, Trusted: true, Origin: registry.Origin{Source: "git", CommitSHA: strings.Repeat("a", 40)}}
}

func TestTriggerMatrix(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, triggerSkills())
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}
	tests := []struct {
		skill      string
		personOK   bool
		modelError string // "" when the model may invoke it
	}{
		{"both-ok", true, ""},
		{"person-only", true, workspace.CodeModelInvocationRefused},
		{"model-only", false, ""},
		{"nobody", false, workspace.CodeModelInvocationRefused},
	}
	for _, tt := range tests {
		t.Run(tt.skill, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runInProcess(t, env, "skill", "show", tt.skill, "x")
			if tt.personOK {
				if code != 0 || out != "Run x for "+tt.skill+".\n" {
					t.Errorf("skill show: exit %d, stdout %q, stderr %q", code, out, errOut)
				}
			} else if code != 1 || out != "" || !strings.Contains(errOut, "user-invocable: false") || !strings.Contains(errOut, "use_skill") {
				t.Errorf("skill show: want a refusal naming user-invocable: false, got exit %d, stdout %q, stderr %q", code, out, errOut)
			}

			out, errOut, code = runInProcess(t, env, "call", "use_skill", `{"skill":"`+tt.skill+`","args":["x"]}`)
			var res struct {
				Success bool                   `json:"success"`
				Error   string                 `json:"error"`
				Message string                 `json:"message"`
				Result  workspace.Instructions `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("call use_skill printed no JSON: %v\nstdout %s\nstderr %s", err, out, errOut)
			}
			if tt.modelError == "" {
				if code != 0 || !res.Success || res.Result.Instructions != "Run x for "+tt.skill+".\n" {
					t.Errorf("use_skill: exit %d, %+v", code, res)
				}
			} else if code != 1 || res.Success || res.Error != tt.modelError || !strings.Contains(res.Message, "disable-model-invocation") {
				t.Errorf("use_skill: want error %s, got exit %d, %+v", tt.modelError, code, res)
			}
		})
	}
}

func TestShowForkAndJSON(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, triggerSkills())
	env := map[string]string{"AGENT_HOME": home}
	out, errOut, code := runInProcess(t, env, "skill", "show", "Forked", "a", "--flag-like", "c")
	if code != 0 || out != "Run a --flag-like c for forked.\n" {
		t.Errorf("show: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "context: fork") || !strings.Contains(errOut, "agent: Explore") || !strings.Contains(errOut, "model: haiku") {
		t.Errorf("show does not report the fork: %q", errOut)
	}
	out, _, code = runInProcess(t, env, "skill", "show", "--json", "forked")
	var r workspace.Instructions
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("show --json: exit %d, %v: %s", code, err, out)
	}
	if r.Context != "fork" || r.Agent != "Explore" || r.Model != "haiku" || len(r.AllowedTools) != 2 || r.BaseDir == "" {
		t.Errorf("show --json = %+v", r)
	}
}

func TestShowErrors(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	env := map[string]string{"AGENT_HOME": home}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no name", []string{"skill", "show"}, 2, "needs a skill <name>"},
		{"unknown", []string{"skill", "show", "nope"}, 1, "nope"},
		{"bad name", []string{"skill", "show", "../x"}, 1, "invalid skill name"},
		{"broken manifest", []string{"skill", "show", "broken"}, 1, "invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runInProcess(t, env, tt.args...)
			if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, tt.code, out, errOut, tt.want)
			}
		})
	}
}

func TestShowBundled(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, nil)
	out, _, code := runInProcess(t, map[string]string{"AGENT_HOME": home}, "skill", "show", "Skill_Authoring", "a weather skill")
	if code != 0 || !strings.Contains(out, "The task at hand: a weather skill\n") || !strings.Contains(out, "`$ARGUMENTS` (all arguments)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestShowArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want []string
		json     bool
	}{
		{"json after the arguments", []string{"a", "--json"}, []string{"a"}, true},
		{"json between", []string{"a", "--json", "-5"}, []string{"a", "-5"}, true},
		{"double dash keeps --json", []string{"a", "--", "--json"}, []string{"a", "--json"}, false},
		{"none", []string{"-x", "y"}, []string{"-x", "y"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var j bool
			got := showArgs(tc.in, &j)
			if !reflect.DeepEqual(got, tc.want) || j != tc.json {
				t.Errorf("showArgs(%q) = %q, json %v; want %q, %v", tc.in, got, j, tc.want, tc.json)
			}
		})
	}
}
