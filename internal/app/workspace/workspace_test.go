package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

func TestToolIndexCollisions(t *testing.T) {
	t.Parallel()
	skill := func(name string, tools ...string) *ActiveSkill {
		e := registry.Entry{Name: name, Canonical: name, Plugin: &registry.Plugin{Path: "/x"}}
		for _, tool := range tools {
			e.Tools = append(e.Tools, registry.Tool{Name: tool, Description: name + " " + tool})
		}
		return &ActiveSkill{Entry: &e, Manifest: &manifest.Manifest{Name: name}}
	}
	ws, err := New(Config{}, nil, []*ActiveSkill{skill("alpha", "greet", "a"), skill("beta", "greet", "use_skill")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ call, wantSkill string }{
		{"greet", "alpha"},
		{"alpha.greet", "alpha"},
		{"beta.greet", "beta"},
		{"Beta.greet", "beta"},
		{"use_skill", BuiltinSkill},
		{"beta.use_skill", "beta"},
		{"a", "alpha"},
	} {
		got, err := ws.Resolve(tc.call)
		if err != nil || got.Skill != tc.wantSkill {
			t.Errorf("Resolve(%q) = %+v, %v; want skill %s", tc.call, got, err, tc.wantSkill)
		}
	}
	if _, err := ws.Resolve("beta.a"); err == nil {
		t.Error("beta.a resolved, but beta has no tool a")
	}
	warnings := strings.Join(ws.Warnings, "\n")
	for _, want := range []string{"alpha.greet and beta.greet", "agent.use_skill and beta.use_skill"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
}

func TestFailureCodes(t *testing.T) {
	t.Parallel()
	ref := &ToolRef{Name: "greet", Skill: "hello"}
	for _, tc := range []struct {
		name     string
		err      error
		wantCode string
		wantMsg  string
	}{
		{"tool error", sdk.Errorf("tool_failed", "boom"), "tool_failed", "boom"},
		{"crash", &sdk.Error{Code: sdk.CodePluginCrashed, Message: "exited"}, sdk.CodePluginCrashed, "exited"},
		{"tampered", errors.Join(errors.New("launch hello"), host.ErrTampered), CodePluginTampered, "agent skill remove hello --yes"},
		{"start", errors.Join(errors.New("launch hello"), host.ErrStart), CodePluginStart, "AGENT_LOG_LEVEL=debug"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := Failure(context.Background(), ref, tc.err)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantMsg) {
				t.Fatalf("Failure = %q, %q; want %q containing %q", code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

func TestExposedNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("t", 70)
	skill := func(name string, tools ...string) *ActiveSkill {
		e := registry.Entry{Name: name, Canonical: name, Plugin: &registry.Plugin{Path: "/x"}}
		for _, tool := range tools {
			e.Tools = append(e.Tools, registry.Tool{Name: tool})
		}
		return &ActiveSkill{Entry: &e, Manifest: &manifest.Manifest{Name: name}}
	}
	ws, err := New(Config{}, nil, []*ActiveSkill{skill("alpha", "greet", long), skill("beta", "greet", long)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		exposed   string
		wantSkill string
	}{
		{"bare name kept by the first", "greet", "alpha"},
		{"shadowed gets skill__tool", "beta__greet", "beta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ws.Resolve(tc.exposed)
			if err != nil || got.Skill != tc.wantSkill || got.Exposed() != tc.exposed {
				t.Fatalf("Resolve(%q) = %+v, %v; want skill %s exposed as itself", tc.exposed, got, err, tc.wantSkill)
			}
		})
	}
	seen := map[string]bool{}
	for _, tool := range ws.Tools {
		n := tool.Exposed()
		if len(n) > MaxToolName {
			t.Errorf("exposed name %q is %d bytes, over %d", n, len(n), MaxToolName)
		}
		if seen[n] {
			t.Errorf("exposed name %q given twice", n)
		}
		seen[n] = true
		if got, err := ws.Resolve(n); err != nil || got != tool {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v", n, got, err, tool)
		}
	}
	if a, b := QualifiedName("beta", long), QualifiedName("betb", long); a == b || len(a) != MaxToolName {
		t.Errorf("QualifiedName cut: %q and %q", a, b)
	}
}
