package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/ground/platform"
	"github.com/agentskills/agent/registry"
)

func TestCheckGolden(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	tests := []struct {
		name   string
		skills string
		args   []string
	}{
		{"check_all_human", "all", []string{"check"}},
		{"check_all_json", "all", []string{"check", "--json"}},
		{"check_unset_human", "", []string{"check"}},
		{"check_named_human", "good,untrusted_one,nope", []string{"--check"}},
		{"check_untrusted_all_json", "all-untrusted", []string{"--check", "--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// An executable AGENT_UV keeps the uv hint (which depends on
			// this machine's PATH) out of the goldens; TestUVHint covers it.
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"AGENT_HOME": home, "AGENT_UV": self}
			if tt.skills != "" {
				env["AGENT_SKILLS"] = tt.skills
			}
			out, errOut, code := runInProcess(t, env, tt.args...)
			checkGolden(t, tt.name, goldenTranscript(home, out, errOut, code))
		})
	}
}

func TestCheckReasons(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	out, _, code := runInProcess(t, map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}, "check", "--json")
	if code != 1 {
		t.Errorf("exit %d, want 1: broken and future are selected by all and cannot load", code)
	}
	var r checkJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]struct {
		active  bool
		reason  string
		scripts int
		tools   int
	}{
		"good":            {true, "", 2, 1},
		"untrusted-one":   {false, workspace.ReasonUntrusted, 1, 0},
		"future":          {false, workspace.ReasonIncompatible, 0, 0},
		"broken":          {false, workspace.ReasonLoadFailed, 0, 0},
		"deploy":          {true, "", 0, 0},
		"skill-authoring": {true, "", 0, 0},
		"base":            {false, workspace.ReasonNotSelected, 0, 13}, // named only: all leaves it out
	}
	if len(r.Skills) != len(want) {
		t.Fatalf("%d skills, want %d: %+v", len(r.Skills), len(want), r.Skills)
	}
	for _, s := range r.Skills {
		w, ok := want[s.Canonical]
		if !ok || s.Active != w.active || s.Reason != w.reason || s.Scripts != w.scripts || s.Tools != w.tools {
			t.Errorf("%s: got active=%v reason=%q scripts=%d tools=%d, want %+v", s.Canonical, s.Active, s.Reason, s.Scripts, s.Tools, w)
		}
	}
	if len(r.Failures) != 2 || !strings.Contains(r.Failures[0].Reason+r.Failures[1].Reason, "99.0.0") {
		t.Errorf("failures = %+v, want broken and future with reasons", r.Failures)
	}
}

func TestCheckWarnsWhenAllFindsNoTrustedSkill(t *testing.T) {
	t.Parallel()
	skills := fixtureSkills()[1:2] // only the untrusted one
	home := writeFixtureHome(t, skills)
	out, errOut, code := runInProcess(t, map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all"}, "check")
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if !strings.Contains(errOut, "warning: AGENT_SKILLS=all found no trusted skill among the 1 installed") {
		t.Errorf("no warning on stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "To trust: agent skill trust untrusted-one") {
		t.Errorf("no trust hint:\n%s", out)
	}
}

// TestInstalledBundledNameIgnored: an installed skill with a bundled
// name (which an older agent let add install, trusted) is never loaded:
// the bundled skill keeps its name (SPEC §5), a warning says how to fix
// it, and remove still removes it.
func TestInstalledBundledNameIgnored(t *testing.T) {
	t.Parallel()
	skills := []fixtureSkill{{
		entry: fixtureSkills()[0].entry,
		files: map[string]string{"SKILL.md": "---\nname: Skill_Authoring\ndescription: My own authoring guide.\n---\nMine.\n"},
	}}
	skills[0].entry.Name, skills[0].entry.Canonical = "Skill_Authoring", "skill-authoring"
	home := writeFixtureHome(t, skills)
	env := map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "skill-authoring"}
	out, _, _ := runInProcess(t, env, "check", "--json")
	var r checkJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	r.Skills = slices.DeleteFunc(r.Skills, func(s checkSkillJSON) bool { return s.Canonical == "base" })
	if len(r.Skills) != 1 || r.Skills[0].Source != "bundled" || !r.Skills[0].Active {
		t.Fatalf("want the bundled skill-authoring only, active: %+v", r.Skills)
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "installed skill skill-authoring (from https://example.com/good.git) is not loaded: skill-authoring is the name of a skill bundled with agent") {
		t.Errorf("no warning: %s", w)
	}
	body, _, code := runInProcess(t, env, "skill", "show", "skill-authoring")
	if code != 0 || strings.Contains(body, "Mine.") {
		t.Fatalf("skill show = %q (exit %d), want the bundled body", body, code)
	}
	prompt, _, _ := runInProcess(t, env, "prompt")
	if strings.Contains(prompt, "My own authoring guide.") || !strings.Contains(prompt, "- skill-authoring: How to write") {
		t.Fatalf("prompt does not use the bundled description:\n%s", prompt)
	}
	if _, errOut, code := runInProcess(t, env, "skill", "remove", "skill-authoring", "--yes"); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	if _, err := registry.NewStore(home).Get("skill-authoring"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("after remove: %v; want ErrNotFound", err)
	}
}

func TestUVHint(t *testing.T) {
	t.Parallel()
	withScripts := &workspace.View{Skills: []workspace.SkillState{{Scripts: 2}}}
	noScripts := &workspace.View{Skills: []workspace.SkillState{{Scripts: 0}}}
	missing := func() (string, string) { return "", "uv was not found on PATH" }
	found := func() (string, string) { return "/usr/bin/uv", "" }
	for _, tc := range []struct {
		name string
		v    *workspace.View
		find func() (string, string)
		want string
	}{
		{"missing with scripts", withScripts, missing, "pipx install uv"},
		{"found", withScripts, found, ""},
		{"no scripts", noScripts, missing, ""},
		{"not asked", withScripts, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := uvHint(tc.v, tc.find)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("uvHint = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestLoggerHidesKilledPlugin: a plugin the host killed (a call past its
// deadline, or shutdown) is not an [ERROR] line at the default level.
func TestLoggerHidesKilledPlugin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level string
		want  bool
	}{{"", false}, {"warn", false}, {"debug", true}} {
		f, _, errOut := testFactory(t, nil)
		log := f.logger(&Config{LogLevel: tc.level})
		log.Error("plugin process exited", "plugin", "__exec", "error", errors.New("signal: killed"))
		if got := strings.Contains(errOut.String(), "plugin process exited"); got != tc.want {
			t.Errorf("level %q: logged = %v; want %v (%q)", tc.level, got, tc.want, errOut.String())
		}
		log.Error("plugin process exited", "plugin", "x", "error", errors.New("exit status 2"))
		if !strings.Contains(errOut.String(), "exit status 2") {
			t.Errorf("level %q: a real crash was hidden", tc.level)
		}
	}
}

// TestCheckProtections: agent check names this build's launch and
// containment protections, which differ between Linux and the portable
// fallbacks of macOS and Windows.
func TestCheckProtections(t *testing.T) {
	t.Parallel()
	home := writeFixtureHome(t, fixtureSkills())
	out, _, _ := runInProcess(t, map[string]string{"AGENT_HOME": home}, "check", "--json")
	var r checkJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	wantLaunch, wantContain := "sealed in-memory copy", "parent-death signal"
	if platform.Portable {
		wantLaunch, wantContain = "private copy", "process group only"
	}
	if !strings.Contains(r.Protections.Launch, wantLaunch) || !strings.Contains(r.Protections.Containment, wantContain) {
		t.Errorf("protections = %+v, want launch with %q and containment with %q", r.Protections, wantLaunch, wantContain)
	}
	human, _, _ := runInProcess(t, map[string]string{"AGENT_HOME": home}, "check")
	if st := sandbox.Probe(); st.ABI > 0 && !strings.Contains(r.Protections.Sandbox, fmt.Sprintf("Landlock ABI %d", st.ABI)) {
		t.Errorf("sandbox line %q does not name Landlock ABI %d", r.Protections.Sandbox, st.ABI)
	}
	if st := sandbox.Probe(); st.Seccomp && !st.UnixPath &&
		(!strings.Contains(r.Protections.Sandbox, "no pathname Unix sockets without network") || strings.Contains(r.Protections.Sandbox, "pathname Unix sockets: reachable")) {
		t.Errorf("sandbox line %q should name the seccomp filter and not call pathname Unix sockets reachable", r.Protections.Sandbox)
	}
	if st := sandbox.Probe(); st.NetNS != strings.Contains(r.Protections.Sandbox, "declared hosts through a proxy") {
		t.Errorf("sandbox line %q: declared hosts through a proxy should be named exactly where network namespaces can be made (%v)", r.Protections.Sandbox, st.NetNS)
	}
	if !strings.Contains(human, "sandbox: "+r.Protections.Sandbox) {
		t.Errorf("human output lacks the sandbox line:\n%s", human)
	}
	if !strings.Contains(human, "containment: "+r.Protections.Containment) {
		t.Errorf("human output lacks the containment line:\n%s", human)
	}
}
